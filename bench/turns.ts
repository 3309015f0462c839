/**
 * `npm run bench:turns`: conversations taking turns, the way chat apps and agents use a server.
 * Each conversation has its own ~1,250-token system prompt, and every turn resends the whole history
 * (system prompt, every earlier question and reply, the new question) as OpenAI clients do. One
 * request at a time: conversation 1 asks, then 2, …, then 1 again. What counts is the first-token
 * time of the later turns, which a server that kept the conversation's evaluated prefix answers
 * after reading only the new tokens.
 *
 * Hearth runs as `hearth serve` once per engine (HEARTH_ENGINE=server and =in-process; a column is
 * labelled by the engine GET /admin/status reports, and dropped with a note when Hearth fell back),
 * beside llama-server stand-alone: the engine's own build (the binary Hearth's server engine runs, on
 * node-llama-cpp's libraries; built here when missing, as `npm run engine:build` does), once with
 * llama-server's defaults and once with the very flags Hearth's server engine gave it (read from its
 * process: Hearth / that is HTTP over engine). HEARTH_BENCH_NATIVE=1 adds the full native build bench:peer uses (about ten
 * minutes to build the first time). Four sequences on every side (`models.parallel: 4`, `-np 4`), the
 * generated `small` model, default settings otherwise (llama-server keeps evicted prompts in host RAM,
 * `--cache-ram`). The systems take turns case by case, so a change in the machine's load hits them
 * alike; the load average is printed beside each case. Ratios are against the engine's llama-server.
 *
 * Cases: 1, 2, 3 and 8 conversations taking turns, then one conversation that returns after four others
 * pushed it out of every sequence.
 *
 * HEARTH_BENCH_CONVERSATIONS (e.g. "2,3") and HEARTH_BENCH_TURNS (default 4) shorten a run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { engineServer, hearthServerArgs, llamaServer, onTcpPort, startHearthProcess, startServer, type RunningServer } from './llama-server.js';
import { chatBody, median, streamChat } from './streams.js';

const SEQUENCES = 4;
const CONTEXT = 4096;
const TURNS = Number(process.env.HEARTH_BENCH_TURNS ?? 4);
const CASES = (process.env.HEARTH_BENCH_CONVERSATIONS ?? '1,2,3,8').split(',').map(Number);
const REPLY_TOKENS = 32;
/** The column the ratios are taken against. */
const PEER = 'llama-server (engine build)';
/** The same binary with the flags Hearth's server engine gave it: Hearth / this is HTTP over engine. */
const SAME_FLAGS = "llama-server (engine build, Hearth's flags)";
/** About 1.1 tokens per word in the generated model's vocabulary: ~1,250 tokens. */
const SYSTEM_WORDS = 1100;

const print = (line: string) => process.stdout.write(`${line}\n`);
const load = () => loadavg()[0]!.toFixed(2);

// ---- the model (npm run model:tiny -- --size small, into a temp folder) ----
const root = mkdtempSync(join(tmpdir(), 'hearth-bench-turns-'));
const modelsDir = join(root, 'models');
mkdirSync(modelsDir);
const modelPath = join(modelsDir, 'small.gguf');
const repo = fileURLToPath(new URL('..', import.meta.url));
execFileSync(process.execPath, [join(repo, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(repo, 'scripts', 'model-tiny.ts'), modelPath, '--size', 'small'], {
  stdio: 'ignore',
});

print(
  `Hearth conversations-taking-turns benchmark — ${new Date().toISOString().slice(0, 16)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
print(
  `model: generated small (512 wide, 8 layers, F32); ${SEQUENCES} sequences per server; each conversation its own ~1,250-token system prompt; ${TURNS} turns each, ${REPLY_TOKENS}-token replies; one request at a time`,
);
print(
  `load average at start: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')}`,
);

// ---- conversations ----
const vocabulary = `the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were
we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into
time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may
part over new sound take only little work know place year live me back give most very after thing our just name good sentence man think say great
where help through much before line right too mean old any same tell boy follow came want show also around form three small set put end does another
well large must big even such because turn here why ask went men read need land different home us move try kind hand picture again change off play`.split(
  /\s+/,
);

let serial = 0;
/** Words from a seeded generator: the same text for the same seed, different texts for different seeds. */
function words(seed: number, count: number): string {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  return Array.from({ length: count }, () => vocabulary[Math.floor(next() * vocabulary.length)]).join(' ');
}

interface Message {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

class Conversation {
  readonly messages: Message[];
  private turn = 0;

  constructor(readonly name: string) {
    // A run-unique opening, so no server can answer from an earlier run's cache.
    this.messages = [{ role: 'system', content: `Conversation ${name} ${process.pid}-${++serial}. ${words(serial * 7919 + process.pid, SYSTEM_WORDS)}` }];
  }

  /** Asks the next question; returns the time to the first token (ms) and the prompt's token count. */
  async ask(url: string, model: string): Promise<{ firstMs: number; promptTokens: number }> {
    this.messages.push({ role: 'user', content: `Question ${++this.turn}: ${words(this.turn * 31 + serial, 8)}?` });
    const body = chatBody(model, REPLY_TOKENS, this.messages, { seed: this.turn });
    const result = await streamChat(url, body, false, performance.now());
    this.messages.push({ role: 'assistant', content: result.text });
    return { firstMs: result.firstMs, promptTokens: result.promptTokens };
  }
}

// ---- systems ----
interface System {
  label: string;
  url: string;
  model: string;
}
const started: RunningServer[] = [];
const stopAll = () => Promise.all(started.map((running) => running.stop()));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stopAll().finally(() => process.exit(130)));

const systems: System[] = [];
const notes: string[] = [];
/** Starts Hearth on one engine; for the server engine returns the flags it gave llama-server. */
async function startHearth(engine: 'in-process' | 'server'): Promise<string[] | undefined> {
  const dataDir = join(root, `hearth-${engine}`);
  mkdirSync(dataDir);
  const hearth = await startHearthProcess(dataDir, { modelsDir, parallel: SEQUENCES, context: CONTEXT, engine });
  started.push(hearth);
  // Load the model (a short request), then ask which engine runs it.
  await new Conversation('warm-up').ask(hearth.url, 'small');
  const token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
  const status = (await (await fetch(`${hearth.url}/admin/status`, { headers: { authorization: `Bearer ${token}` } })).json()) as {
    loaded?: { id: string; engine?: string; engine_reason?: string }[];
  };
  const entry = status.loaded?.find((model) => model.id === 'small');
  if (entry?.engine !== engine) {
    notes.push(
      `Hearth with HEARTH_ENGINE=${engine} ran the ${entry?.engine ?? 'unknown'} engine (${entry?.engine_reason ?? 'no reason given'}); column left out.`,
    );
    await hearth.stop();
    return undefined;
  }
  systems.push({ label: `Hearth (${engine === 'server' ? 'server' : 'in-process'} engine)`, url: hearth.url, model: 'small' });
  return engine === 'server' ? hearthServerArgs(hearth.url, dataDir) : undefined;
}

/** llama-server stand-alone: its defaults apart from the slots and context, or the flags given. */
async function startLlamaServer(label: string, binary: string, libraries?: string, flags?: string[]): Promise<void> {
  const port = 19000 + Math.floor(Math.random() * 1000);
  const args = flags ? [...flags] : ['-m', modelPath, '--host', '127.0.0.1', '--port', '', '-np', String(SEQUENCES), '-c', String(CONTEXT * SEQUENCES)];
  onTcpPort(args, port);
  const env = libraries ? { ...process.env, LD_LIBRARY_PATH: libraries } : process.env;
  const server = await startServer(binary, args, port, env, libraries);
  started.push(server);
  await new Conversation('warm-up').ask(server.url, 'small');
  systems.push({ label, url: server.url, model: 'small' });
}

// The engine's build first: Hearth's server engine needs it too (without it, Hearth falls back and says so).
const engineBuild = await engineServer(print);
const hearthFlags = await startHearth('server');
await startHearth('in-process');
if ('skipped' in engineBuild) notes.push(`llama-server (engine build): skipped — ${engineBuild.skipped}`);
else {
  const { binary, libraries } = engineBuild.paths;
  await startLlamaServer(PEER, binary, libraries.dir);
  if (hearthFlags) {
    print(`${SAME_FLAGS}: ${hearthFlags.join(' ')}`);
    await startLlamaServer(SAME_FLAGS, binary, libraries.dir, hearthFlags);
  }
}
if (process.env.HEARTH_BENCH_NATIVE === '1') {
  const native = await llamaServer(print);
  if ('skipped' in native) notes.push(`llama-server (native build): skipped — ${native.skipped}`);
  else await startLlamaServer('llama-server (native build)', native.binary);
}

// ---- cases ----
interface Row {
  label: string;
  /** Per system: median later-turn (or returning) first-token time, ms. */
  ms: Map<string, number>;
  load: string;
}
const rows: Row[] = [];

async function takingTurns(system: System, count: number): Promise<{ later: number; first: number; promptTokens: number }> {
  const conversations = Array.from({ length: count }, (_, index) => new Conversation(String(index + 1)));
  const later: number[] = [];
  const first: number[] = [];
  let promptTokens = 0;
  for (let turn = 0; turn < TURNS; turn++) {
    for (const conversation of conversations) {
      const result = await conversation.ask(system.url, system.model);
      (turn === 0 ? first : later).push(result.firstMs);
      if (turn === 0) promptTokens = result.promptTokens;
    }
  }
  return { later: median(later), first: median(first), promptTokens };
}

/** One conversation, then four others (one per sequence) pushing it out, then it comes back. */
async function returning(system: System): Promise<{ back: number; fresh: number }> {
  const returner = new Conversation('returning');
  await returner.ask(system.url, system.model);
  await returner.ask(system.url, system.model);
  const fresh: number[] = [];
  for (let index = 0; index < SEQUENCES; index++) fresh.push((await new Conversation(`other ${index}`).ask(system.url, system.model)).firstMs);
  const back = await returner.ask(system.url, system.model);
  return { back: back.firstMs, fresh: median(fresh) };
}

try {
  for (const count of CASES) {
    const row: Row = { label: `${count} conversation${count > 1 ? 's' : ''} taking turns`, ms: new Map(), load: '' };
    for (const system of systems) {
      const result = await takingTurns(system, count);
      row.ms.set(system.label, result.later);
      print(
        `  ${system.label}, ${count} conversation${count > 1 ? 's' : ''}: later turns ${result.later.toFixed(0)} ms (first turns ${result.first.toFixed(0)} ms, ${result.promptTokens} prompt tokens), load ${load()}`,
      );
    }
    row.load = load();
    rows.push(row);
  }
  const row: Row = { label: 'a conversation returning after 4 others pushed it out', ms: new Map(), load: '' };
  for (const system of systems) {
    const result = await returning(system);
    row.ms.set(system.label, result.back);
    print(
      `  ${system.label}, returning conversation: ${result.back.toFixed(0)} ms (a new conversation's first turn: ${result.fresh.toFixed(0)} ms), load ${load()}`,
    );
  }
  row.load = load();
  rows.push(row);
} finally {
  await stopAll();
}

const has = (label: string) => systems.some((system) => system.label === label);
const ratios: { header: string; of: string; to: string }[] = [];
for (const system of systems.filter((entry) => entry.label.startsWith('Hearth')))
  if (has(PEER)) ratios.push({ header: `${system.label} / llama-server`, of: system.label, to: PEER });
if (has('Hearth (server engine)') && has(SAME_FLAGS))
  ratios.push({ header: 'Hearth (server engine) / same binary, same flags', of: 'Hearth (server engine)', to: SAME_FLAGS });
const cells = (values: string[]) => print(`| ${values.join(' | ')} |`);
print('');
print('Later-turn first-token time, median (ms):');
print('');
cells(['case', ...systems.map((system) => system.label), ...ratios.map((ratio) => ratio.header), 'load (1 min)']);
cells(Array.from({ length: 2 + systems.length + ratios.length }, () => '---'));
for (const row of rows) {
  cells([
    row.label,
    ...systems.map((system) => (row.ms.get(system.label) ?? 0).toFixed(0)),
    ...ratios.map((ratio) => (row.ms.get(ratio.of)! / row.ms.get(ratio.to)!).toFixed(2)),
    row.load,
  ]);
}
for (const note of notes) print(`note: ${note}`);
print('');
print(
  `load average at end: ${loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')} (the systems take turns case by case; compare ratios)`,
);
rmSync(root, { recursive: true, force: true });
process.exit(0);
