/**
 * `npm run bench:protocols`: what each dialect costs over the engine. The same request, a unique
 * question to the generated `small` model with a fixed number of reply tokens, goes to Hearth as
 * OpenAI chat completions (the yardstick), Anthropic Messages, Ollama's /api/chat and, as a raw
 * prompt, OpenAI completions, all streamed, one request at a time, the protocols taking turns round
 * by round so a change in the machine's load hits them alike. Each answer is read as its own
 * client reads it (SSE events, or Ollama's NDJSON lines); tokens are the counts each protocol reports.
 *
 * Printed per protocol: median first-token time and median throughput (reply tokens per second from
 * the request to the end), each as a ratio to chat completions'. The raw completions prompt has no
 * chat template around it, so its prompt is a few tokens shorter.
 *
 * HEARTH_BENCH_ENGINE (server, the default, or in-process), HEARTH_BENCH_ROUNDS (default 8) and
 * HEARTH_BENCH_TOKENS (default 64) change a run.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startHearthProcess } from './llama-server.js';
import { median, uniquePrompt } from './streams.js';

const ROUNDS = Number(process.env.HEARTH_BENCH_ROUNDS ?? 8);
const TOKENS = Number(process.env.HEARTH_BENCH_TOKENS ?? 64);
const ENGINE = process.env.HEARTH_BENCH_ENGINE === 'in-process' ? 'in-process' : 'server';
const MODEL = 'small';

const print = (line: string) => process.stdout.write(`${line}\n`);
const agent = new Agent({ keepAlive: true, maxSockets: 4 });

interface Protocol {
  name: string;
  path: string;
  body(prompt: string): Record<string, unknown>;
  /** What one streamed line or event says: visible text, and the reply's token count when it reports it. */
  read(line: string): { text?: string; tokens?: number };
}

const dataOf = (line: string): Record<string, unknown> | undefined => {
  if (!line.startsWith('data: {')) return undefined;
  return JSON.parse(line.slice(6)) as Record<string, unknown>;
};

const PROTOCOLS: Protocol[] = [
  {
    name: 'chat completions',
    path: '/v1/chat/completions',
    body: (prompt) => ({
      model: MODEL,
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: TOKENS,
      messages: [{ role: 'user', content: prompt }],
    }),
    read(line) {
      const chunk = dataOf(line) as { choices?: { delta?: { content?: string } }[]; usage?: { completion_tokens: number } | null } | undefined;
      return { text: chunk?.choices?.[0]?.delta?.content ?? undefined, tokens: chunk?.usage?.completion_tokens };
    },
  },
  {
    name: 'Anthropic messages',
    path: '/v1/messages',
    body: (prompt) => ({ model: MODEL, stream: true, max_tokens: TOKENS, messages: [{ role: 'user', content: prompt }] }),
    read(line) {
      const event = dataOf(line) as { type?: string; delta?: { type?: string; text?: string }; usage?: { output_tokens?: number } } | undefined;
      if (event?.type === 'content_block_delta' && event.delta?.type === 'text_delta') return { text: event.delta.text };
      if (event?.type === 'message_delta') return { tokens: event.usage?.output_tokens };
      return {};
    },
  },
  {
    name: 'Ollama chat',
    path: '/api/chat',
    body: (prompt) => ({ model: MODEL, options: { num_predict: TOKENS }, messages: [{ role: 'user', content: prompt }] }),
    read(line) {
      if (!line.startsWith('{')) return {};
      const chunk = JSON.parse(line) as { message?: { content?: string }; done?: boolean; eval_count?: number };
      return { text: chunk.message?.content || undefined, tokens: chunk.done ? chunk.eval_count : undefined };
    },
  },
  {
    name: 'completions (raw)',
    path: '/v1/completions',
    body: (prompt) => ({ model: MODEL, stream: true, stream_options: { include_usage: true }, max_tokens: TOKENS, prompt }),
    read(line) {
      const chunk = dataOf(line) as { choices?: { text?: string }[]; usage?: { completion_tokens: number } | null } | undefined;
      return { text: chunk?.choices?.[0]?.text || undefined, tokens: chunk?.usage?.completion_tokens };
    },
  },
];

interface Sample {
  firstMs: number;
  tokensPerSecond: number;
}

/** One streamed request, read line by line as its client would. */
function measure(url: string, protocol: Protocol): Promise<Sample> {
  const body = JSON.stringify(protocol.body(uniquePrompt()));
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let firstMs = 0;
    let tokens = 0;
    let pending = '';
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const call = request(`${url}${protocol.path}`, { method: 'POST', agent, headers }, (response) => {
      response.setEncoding('utf8');
      response.on('data', (piece: string) => {
        pending += piece;
        const lines = pending.split('\n');
        pending = lines.pop()!;
        for (const line of lines) {
          const seen = protocol.read(line.trim());
          if (seen.text && !firstMs) firstMs = performance.now() - started;
          if (seen.tokens !== undefined) tokens = seen.tokens;
        }
      });
      response.on('end', () => {
        if (response.statusCode !== 200) return reject(new Error(`${protocol.path}: HTTP ${response.statusCode}`));
        if (!firstMs || !tokens) return reject(new Error(`${protocol.path}: no text or no token count in the answer`));
        resolve({ firstMs, tokensPerSecond: tokens / ((performance.now() - started) / 1000) });
      });
      response.on('error', reject);
    });
    call.on('error', reject);
    call.end(body);
  });
}

const root = mkdtempSync(join(tmpdir(), 'hearth-bench-protocols-'));
const modelsDir = join(root, 'models');
mkdirSync(modelsDir);
const repo = fileURLToPath(new URL('..', import.meta.url));
execFileSync(
  process.execPath,
  [join(repo, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(repo, 'scripts', 'model-tiny.ts'), join(modelsDir, `${MODEL}.gguf`), '--size', 'small'],
  { stdio: 'ignore' },
);

print(
  `Hearth protocols benchmark — ${new Date().toISOString().slice(0, 16)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
print(`model: generated small (512 wide, 8 layers, F32) on the ${ENGINE} engine; ${TOKENS} reply tokens; ${ROUNDS} rounds, protocols taking turns`);

const dataDir = join(root, 'data');
mkdirSync(dataDir);
const hearth = await startHearthProcess(dataDir, { modelsDir, parallel: 1, context: 2048, engine: ENGINE });
try {
  const admin = { authorization: `Bearer ${readFileSync(join(dataDir, 'admin-token'), 'utf8').trim()}` };
  await fetch(`${hearth.url}/admin/models/${MODEL}/load`, { method: 'POST', headers: admin });
  // One warm-up request each: the first of any kind pays for lazy set-up.
  for (const protocol of PROTOCOLS) await measure(hearth.url, protocol);
  const samples = new Map<string, Sample[]>(PROTOCOLS.map((protocol) => [protocol.name, []]));
  const loads: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const protocol of PROTOCOLS) samples.get(protocol.name)!.push(await measure(hearth.url, protocol));
    loads.push(loadavg()[0]!);
  }
  const base = samples.get(PROTOCOLS[0]!.name)!;
  const baseFirst = median(base.map((sample) => sample.firstMs));
  const baseRate = median(base.map((sample) => sample.tokensPerSecond));
  print(`load average during the run: ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}`);
  print('');
  print('| protocol | first token (ms) | × chat completions | tokens/s | × chat completions |');
  print('|---|---|---|---|---|');
  for (const protocol of PROTOCOLS) {
    const list = samples.get(protocol.name)!;
    const first = median(list.map((sample) => sample.firstMs));
    const rate = median(list.map((sample) => sample.tokensPerSecond));
    // First token: lower is better, so the ratio is chat's time over this one's (≥ 1 means as fast or faster).
    print(`| ${protocol.name} | ${first.toFixed(0)} | ${(baseFirst / first).toFixed(2)} | ${rate.toFixed(1)} | ${(rate / baseRate).toFixed(2)} |`);
  }
} finally {
  await hearth.stop();
  agent.destroy();
  rmSync(root, { recursive: true, force: true });
}
