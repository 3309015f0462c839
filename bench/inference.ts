/**
 * `npm run bench`: Hearth's HTTP serving measured against the raw engine beside it, in one run,
 * on the `small` generated model. Every figure is a ratio or a difference against the direct
 * node-llama-cpp call with the same settings, so the machine's speed cancels out.
 */
import { mkdirSync, existsSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { buildApp } from '../companion/src/app.js';
import { silentLogger } from '../companion/src/logger.js';
import { createServices } from '../companion/src/services.js';
import { writeTinyModel } from '../scripts/gguf/write-model.js';
import { directRun, openDirect, type Run } from './direct.js';
import { httpRun, requestsPerSecond } from './http.js';
import { writeFileAtomic } from '../companion/src/store/files.js';

const TOKENS = 128;
const ROUNDS = 5;
const PROMPT = 'Tell me a long story about a lighthouse keeper and the sea.';

const dataDir = join(tmpdir(), 'hearth-bench');
const modelPath = join(dataDir, 'models', 'small.gguf');
mkdirSync(join(dataDir, 'models'), { recursive: true });
if (!existsSync(modelPath)) await writeTinyModel(modelPath, { size: 'small' });
writeFileAtomic(join(dataDir, 'config.yaml'), 'version: 1\nmodels:\n  parallel: 8\n  context_size: 2048\n  external_sources: false\n');

const services = await createServices({ dataDir, externalSources: false, log: silentLogger, version: 'bench' });
const app = await buildApp({ services, webRoot: '/nonexistent' });
await app.listen({ host: '127.0.0.1', port: 0 });
const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
// Load before timing anything.
await httpRun(url, 'small', PROMPT, 8, 1);
const maxThreads = services.engine.status()[0]!.threads;

const best = (runs: Run[]) => runs.reduce((a, b) => (b.tokensPerSecond > a.tokensPerSecond ? b : a));
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const rows: string[] = [];
const print = (line: string) => {
  rows.push(line);
  process.stdout.write(`${line}\n`);
};
print(
  `Hearth inference benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`,
);
print(`model: generated small (512 wide, 8 layers, ${TOKENS} tokens per stream); Hearth threads: chosen per batch size from 1..${maxThreads} by measuring`);

const direct = await openDirect(modelPath, 8);
const aggregate: Record<number, { http: number; raw: number; rawThreads: number }> = {};
let singleHttp: Run[] = [];
let singleRaw: Record<number, Run[]> = {};
for (const streams of [1, 4, 8]) {
  const http: Run[] = [];
  const raw: Run[] = [];
  const rawByThreads: Record<number, Run[]> = {};
  for (let round = 0; round < ROUNDS; round++) {
    http.push(await httpRun(url, 'small', PROMPT, TOKENS, streams));
    for (const candidate of [1, 2].filter((count) => count <= cpus().length)) {
      const run = await directRun(direct, candidate, PROMPT, TOKENS, streams);
      (rawByThreads[candidate] ??= []).push(run);
      raw.push(run);
    }
  }
  const rawBest = best(raw);
  aggregate[streams] = { http: best(http).tokensPerSecond, raw: rawBest.tokensPerSecond, rawThreads: rawBest.threads };
  if (streams === 1) {
    singleHttp = http;
    singleRaw = rawByThreads;
  }
}
await direct.close();

// One stream is compared with raw node-llama-cpp at the thread count Hearth chose for one-token decodes.
const choices = services.engine.status()[0]!.threadChoices;
const threads = choices.find((choice) => choice.tokens === '1')?.threads ?? maxThreads;
const sameThreads = singleRaw[threads] ?? Object.values(singleRaw).flat();
const s = {
  httpTps: best(singleHttp).tokensPerSecond,
  rawTps: best(sameThreads).tokensPerSecond,
  httpTtft: singleHttp.map((run) => run.firstTokenMs),
  rawTtft: sameThreads.map((run) => run.firstTokenMs),
};
print('');
print(`| figure | Hearth HTTP | raw engine | ratio / difference | target |`);
print(`|---|---|---|---|---|`);
print(
  `| streaming tok/s, 1 stream, same threads (${threads}) | ${s.httpTps.toFixed(1)} | ${s.rawTps.toFixed(1)} | ${(s.httpTps / s.rawTps).toFixed(3)} | ≥ 0.95 |`,
);
print(
  `| time to first token (median ms) | ${median(s.httpTtft).toFixed(1)} | ${median(s.rawTtft).toFixed(1)} | ${(median(s.httpTtft) - median(s.rawTtft)).toFixed(1)} ms | ≤ 5 ms |`,
);
for (const streams of [1, 4, 8]) {
  const row = aggregate[streams]!;
  print(
    `| aggregate tok/s, ${streams} concurrent (raw best: ${row.rawThreads} thread${row.rawThreads > 1 ? 's' : ''}) | ${row.http.toFixed(1)} | ${row.raw.toFixed(1)} | ${(row.http / row.raw).toFixed(3)} | ≥ 0.9 |`,
  );
}
print(
  `| gain of 8 streams over 1 | ${(aggregate[8]!.http / aggregate[1]!.http).toFixed(2)}× | ${(aggregate[8]!.raw / aggregate[1]!.raw).toFixed(2)}× | | raw ≈ 1.4× |`,
);

print('');
print(
  `Hearth's thread choice per batch size (tokens per decode → threads; measured ms per token per count): ${choices
    .map(
      (choice) =>
        `${choice.tokens} → ${choice.threads} (${Object.entries(choice.msPerToken)
          .map(([count, ms]) => `${count}: ${ms}`)
          .join(', ')})`,
    )
    .join('; ')}`,
);

const bare = Fastify();
const body = JSON.stringify(await (await fetch(`${url}/v1/models`)).json());
bare.get('/v1/models', async (_request, reply) => reply.type('application/json').send(body));
await bare.listen({ host: '127.0.0.1', port: 0 });
const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}`;
const rps = { hearth: [] as number[], bare: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  rps.hearth.push(await requestsPerSecond(`${url}/v1/models`, 2000));
  rps.bare.push(await requestsPerSecond(`${bareUrl}/v1/models`, 2000));
}
print(
  `| /v1/models requests/s | ${median(rps.hearth).toFixed(0)} | ${median(rps.bare).toFixed(0)} (bare Fastify) | ${(median(rps.hearth) / median(rps.bare)).toFixed(3)} | ≥ 0.8 |`,
);

await bare.close();
await app.close();
await services.close();
process.exit(0);
