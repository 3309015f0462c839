/**
 * `npm run bench:vision`: images in conversations, Hearth against the engine's llama-server.
 *
 * A generated pair: the `small` text model (512 wide, 8 layers) and a projector whose image encoder
 * is big enough for its work to show (224×224 images in 14-pixel patches, so 256 tokens an image,
 * through a 4-block, 384-wide transformer). Hearth runs as `hearth serve` on the llama-server engine
 * (over HTTP, /v1/chat/completions), beside the engine's own llama-server build stand-alone with
 * the same model, projector and images, once with llama-server's defaults (the ratios' base) and once
 * with the very flags Hearth's engine gave it (Hearth / that is HTTP over engine). One sequence each.
 * The systems take turns round by round, so a change in the machine's load hits them alike.
 *
 * (a) First token of a conversation's first turn with one image (a 1024×768 JPEG, another each
 *     round, after a question no earlier request asked): Hearth checks the image, llama-server
 *     decodes, scales and encodes it, and the prompt is read.
 * (b) The next turn of that conversation: the image is in the history, and the server's cache holds
 *     it, so only the new text should be read (the usage's prompt_tokens_details.cached_tokens says
 *     how much was not). Its first token against the next turn of a text-only conversation whose
 *     first turn had as many tokens as the image turn.
 * (c) Hearth's image check and conversion (generation/media-check.ts) of a 1024×1024 PNG, JPEG and
 *     WebP, one libvips thread: median ms.
 *
 * HEARTH_BENCH_ROUNDS (default 5) changes a run.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { checkedImage } from '../companion/src/generation/media-check.js';
import { writeTinyModel } from '../scripts/gguf/write-model.js';
import { imageTokens, writeTinyProjector, type ImageEncoderShape } from '../scripts/gguf/write-projector.js';
import { engineServer, hearthServerArgs, onTcpPort, startHearthProcess, startServer, type RunningServer } from './llama-server.js';
import { chatBody, median, streamChat } from './streams.js';

const ROUNDS = Number(process.env.HEARTH_BENCH_ROUNDS ?? 5);
const CONTEXT = 4096;
const REPLY_TOKENS = 16;
const CHECK_RUNS = 9;
const encoder: ImageEncoderShape = { imageSize: 224, patchSize: 14, embedding: 384, heads: 6, feedForward: 1536, blocks: 4, hidden: 512 };
/** The column the ratios are taken against. */
const PEER = 'llama-server (engine build)';
const SAME_FLAGS = "llama-server (engine build, Hearth's flags)";
const HEARTH = 'Hearth (server engine)';

const print = (line: string) => process.stdout.write(`${line}\n`);
const load = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

// ---- the model and its projector, in a folder of their own (discovery pairs mmproj-small.gguf with small.gguf) ----
const root = mkdtempSync(join(tmpdir(), 'hearth-bench-vision-'));
const modelsDir = join(root, 'models');
mkdirSync(modelsDir);
const modelPath = join(modelsDir, 'small.gguf');
const projectorPath = join(modelsDir, 'mmproj-small.gguf');
await writeTinyModel(modelPath, { size: 'small' });
await writeTinyProjector(projectorPath, { size: 'small', image: encoder });

print(
  `Hearth vision benchmark — ${new Date().toISOString().slice(0, 16)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
print(
  `model: generated small (512 wide, 8 layers, F32) with a projector of ${encoder.imageSize}×${encoder.imageSize} images in ${encoder.patchSize}-pixel patches (${imageTokens(encoder)} tokens an image, ${encoder.blocks} blocks ${encoder.embedding} wide); one sequence per server, ${REPLY_TOKENS}-token replies, ${ROUNDS} rounds, the systems taking turns`,
);
print(`load average at start: ${load()}`);

// ---- images ----
/** A photo-like image's raw RGB pixels: smooth colour fields with some grain, different for each seed. */
function picture(width: number, height: number, seed: number): Buffer {
  const pixels = Buffer.alloc(width * height * 3);
  let state = (seed * 7919 + 1) % 2147483648;
  const grain = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648) * 24;
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 3;
      pixels[at] = (128 + 100 * Math.sin(x / 97 + seed) + grain()) & 255;
      pixels[at + 1] = (128 + 100 * Math.cos(y / 71 + seed * 2) + grain()) & 255;
      pixels[at + 2] = (128 + 90 * Math.sin((x + y) / 53 + seed * 3) + grain()) & 255;
    }
  return pixels;
}

async function photo(seed: number): Promise<string> {
  const jpeg = await sharp(picture(1024, 768, seed), { raw: { width: 1024, height: 768, channels: 3 } })
    .jpeg({ quality: 85 })
    .toBuffer();
  return `data:image/jpeg;base64,${jpeg.toString('base64')}`;
}

// ---- conversations ----
const vocabulary =
  'the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part'.split(
    ' ',
  );
function words(seed: number, count: number): string {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(' ');
}

interface System {
  label: string;
  url: string;
}

interface Turn {
  firstMs: number;
  promptTokens: number;
  cachedTokens: number;
}

type Message = { role: string; content: string | object[] };

/** One conversation of two turns: the first (its content given), then a short follow-up question. */
async function conversation(system: System, first: Message['content'], seed: number): Promise<{ first: Turn; next: Turn }> {
  const messages: Message[] = [{ role: 'user', content: first }];
  const ask = async (): Promise<Turn & { text: string }> =>
    streamChat(system.url, chatBody('small', REPLY_TOKENS, messages, { seed, temperature: 0 }), false, performance.now());
  const one = await ask();
  messages.push({ role: 'assistant', content: one.text }, { role: 'user', content: `And then? ${words(seed + 1, 6)}` });
  const two = await ask();
  return { first: one, next: two };
}

let serial = 0;
/** A question no earlier request asked (so no cache answers it), `extra` words long. */
const question = (extra: number) => `Request ${process.pid}-${++serial}: what is in this picture? ${words(serial * 7919, extra)}`;

// ---- systems ----
const started: RunningServer[] = [];
const stopAll = () => Promise.all(started.map((running) => running.stop()));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().finally(() => process.exit(130)));
const systems: System[] = [];

const engineBuild = await engineServer(print);
if ('skipped' in engineBuild) {
  print(`The llama-server engine is not available: ${engineBuild.skipped}`);
  process.exit(1);
}
const { binary, libraries } = engineBuild.paths;

interface Measured {
  imageFirst: number[];
  imageNext: number[];
  textFirst: number[];
  textNext: number[];
  /** The prompt tokens the next turn read (not from the cache), and how many it had beyond the first turn's. */
  imageNextRead: number[];
  imageNextNew: number[];
  textNextRead: number[];
  imagePrompt: number;
  textPrompt: number;
}
const measured = new Map<string, Measured>();
const tokens = imageTokens(encoder);

async function startLlamaServer(label: string, flags?: string[]): Promise<void> {
  const port = 19000 + Math.floor(Math.random() * 1000);
  const args = flags ? [...flags] : ['-m', modelPath, '--mmproj', projectorPath, '-np', '1', '-c', String(CONTEXT)];
  onTcpPort(args, port);
  const server = await startServer(binary, args, port, { ...process.env, LD_LIBRARY_PATH: libraries.dir }, libraries.dir);
  started.push(server);
  systems.push({ label, url: server.url });
}

/** Hearth on the llama-server engine, then the engine's llama-server with its defaults and with the flags Hearth gave it. */
async function startSystems(): Promise<void> {
  const hearthData = join(root, 'hearth');
  mkdirSync(hearthData);
  const hearth = await startHearthProcess(hearthData, { modelsDir, parallel: 1, context: CONTEXT, engine: 'server' });
  started.push(hearth);
  const hearthFlags = await hearthServerArgs(hearth.url, hearthData, 'small');
  systems.push({ label: HEARTH, url: hearth.url });
  await startLlamaServer(PEER);
  print(`${SAME_FLAGS}: ${hearthFlags.join(' ')}`);
  await startLlamaServer(SAME_FLAGS, hearthFlags);
}

const withImage = (url: string): object[] => [
  { type: 'text', text: question(4) },
  { type: 'image_url', image_url: { url } },
];

/**
 * How many words of text make a text-only first turn as long as an image turn, measured once on
 * Hearth: a probe of `tokens` extra words costs what its prompt has beyond the image turn's without the image.
 */
async function fillerWords(): Promise<number> {
  const imageTurn = await conversation(systems[0]!, withImage(await photo(99)), 2);
  const probeTurn = await conversation(systems[0]!, question(4 + tokens), 2);
  const probeTokens = probeTurn.first.promptTokens - (imageTurn.first.promptTokens - tokens);
  return 4 + Math.max(1, Math.round((tokens * tokens) / Math.max(1, probeTokens)));
}

/** (a) and (b): each round, every system (a different one first) has an image conversation and a text-only one as long. */
async function measure(): Promise<void> {
  // A warm-up conversation with an image on each (the first image loads what the encoder needs).
  for (const system of systems) await conversation(system, withImage(await photo(0)), 1);
  const filler = await fillerWords();
  for (const system of systems)
    measured.set(system.label, {
      imageFirst: [],
      imageNext: [],
      textFirst: [],
      textNext: [],
      imageNextRead: [],
      imageNextNew: [],
      textNextRead: [],
      imagePrompt: 0,
      textPrompt: 0,
    });
  for (let round = 1; round <= ROUNDS; round++) {
    const image = await photo(round);
    for (let index = 0; index < systems.length; index++) {
      const system = systems[(index + round) % systems.length]!;
      const entry = measured.get(system.label)!;
      const seen = await conversation(system, withImage(image), round);
      const read = await conversation(system, question(filler), round);
      entry.imageFirst.push(seen.first.firstMs);
      entry.imageNext.push(seen.next.firstMs);
      entry.textFirst.push(read.first.firstMs);
      entry.textNext.push(read.next.firstMs);
      entry.imageNextRead.push(seen.next.promptTokens - seen.next.cachedTokens);
      entry.imageNextNew.push(seen.next.promptTokens - seen.first.promptTokens);
      entry.textNextRead.push(read.next.promptTokens - read.next.cachedTokens);
      entry.imagePrompt = seen.first.promptTokens;
      entry.textPrompt = read.first.promptTokens;
    }
    print(`  round ${round} done, load ${load()}`);
  }
}

try {
  await startSystems();
  await measure();
} finally {
  await stopAll();
}

// ---- (c): the image check on one libvips thread ----
sharp.concurrency(1);
const checks: { format: string; ms: number; bytes: number; result: string }[] = [];
const raw = picture(1024, 1024, 7);
const source = () => sharp(raw, { raw: { width: 1024, height: 1024, channels: 3 } });
for (const [format, encoded] of [
  ['PNG', await source().png().toBuffer()],
  ['JPEG', await source().jpeg({ quality: 85 }).toBuffer()],
  ['WebP', await source().webp({ quality: 80 }).toBuffer()],
] as const) {
  const times: number[] = [];
  let result = '';
  for (let run = 0; run < CHECK_RUNS; run++) {
    const begun = performance.now();
    const checked = await checkedImage({ kind: 'image', data: encoded, mime: 'image/*', offset: 0 });
    times.push(performance.now() - begun);
    result = checked.data === encoded ? 'passed as it came' : `converted to ${checked.mime} (${(checked.data.length / 1e6).toFixed(1)} MB)`;
  }
  checks.push({ format, ms: median(times), bytes: encoded.length, result });
}

// ---- tables ----
const cells = (values: string[]) => print(`| ${values.join(' | ')} |`);
const ms = (values: number[]) => median(values).toFixed(0);
const ratio = (of: number[], to: number[]) => (median(of) / median(to)).toFixed(2);
print('');
print(`(a) First token of a first turn with one 1024×768 JPEG (${tokens} image tokens), median ms:`);
print('');
cells(['system', 'image turn', 'prompt tokens', `/ ${PEER}`, 'text-only turn as long', 'image / text-only']);
cells(Array.from({ length: 6 }, () => '---'));
const peer = measured.get(PEER)!;
for (const system of systems) {
  const entry = measured.get(system.label)!;
  cells([
    system.label,
    ms(entry.imageFirst),
    String(entry.imagePrompt),
    ratio(entry.imageFirst, peer.imageFirst),
    `${ms(entry.textFirst)} (${entry.textPrompt} tokens)`,
    ratio(entry.imageFirst, entry.textFirst),
  ]);
}
print('');
print('(b) The next turn, the image in the history: first token (median ms) and the prompt tokens read (not from the cache):');
print('');
cells(['system', 'next turn after the image', 'tokens read / added since turn 1', 'next turn, text-only', 'tokens read', 'image / text-only', `/ ${PEER}`]);
cells(Array.from({ length: 7 }, () => '---'));
for (const system of systems) {
  const entry = measured.get(system.label)!;
  cells([
    system.label,
    ms(entry.imageNext),
    `${median(entry.imageNextRead)} / ${median(entry.imageNextNew)}`,
    ms(entry.textNext),
    String(median(entry.textNextRead)),
    ratio(entry.imageNext, entry.textNext),
    ratio(entry.imageNext, peer.imageNext),
  ]);
}
const same = measured.get(SAME_FLAGS)!;
const ours = measured.get(HEARTH)!;
print('');
print(
  `Hearth / same binary with Hearth's flags (HTTP over engine): image turn ${ratio(ours.imageFirst, same.imageFirst)}, next turn ${ratio(ours.imageNext, same.imageNext)}`,
);
print('');
print(`(c) Hearth's image check and conversion of a 1024×1024 image, one libvips thread, median of ${CHECK_RUNS} (ms):`);
print('');
cells(['format', 'file', 'ms', 'what the engine gets']);
cells(Array.from({ length: 4 }, () => '---'));
for (const check of checks) cells([check.format, `${(check.bytes / 1e6).toFixed(2)} MB`, check.ms.toFixed(1), check.result]);
print('');
print(`load average at end: ${load()} (the systems take turns round by round; compare ratios)`);
rmSync(root, { recursive: true, force: true });
process.exit(0);
