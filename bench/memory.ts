/**
 * `npm run bench:memory -- [--data FILE] [--runs transcript,distill] [--load-turns N] [--out DIR]`
 *
 * Recall on LoCoMo through the HTTP API as the LoCoMo protocol in bench/README.md describes: one agent per
 * conversation, one POST /memory/ingest per session, one POST /memory/context per question;
 * the results are scored by score.mjs (R@800t over categories 1-4). Two runs: transcript only
 * (skip_extraction) and with distillation on the generated tiny model. Then ingestion speed
 * and search latency with N synthetic transcript turns in one agent, and how long the event loop
 * stalls while one 10,000-turn ingest is written.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadRun } from './memory/load.js';
import { readLocomo } from './memory/locomo.js';
import { recallRun, score, startServer } from './memory/run.js';
import { stallRun } from './memory/stall.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: {
    data: { type: 'string', default: process.env.HEARTH_LOCOMO_DATA },
    scorer: { type: 'string' },
    runs: { type: 'string', default: 'transcript,distill' },
    'load-turns': { type: 'string', default: '100000' },
    out: { type: 'string', default: join(root, 'bench', 'results') },
  },
});
if (!values.data) {
  process.stderr.write('Pass the LoCoMo file: npm run bench:memory -- --data PATH/locomo-dev.json (or set HEARTH_LOCOMO_DATA). See bench/README.md.\n');
  process.exit(2);
}
const data = resolve(values.data);
const scorer = resolve(values.scorer ?? join(dirname(data), 'score.mjs'));
const runs = values.runs!.split(',').filter(Boolean);
const loadTurns = Number(values['load-turns']);
mkdirSync(values.out!, { recursive: true });
const samples = readLocomo(data);
const lines: string[] = [];
const print = (line: string) => {
  lines.push(line);
  process.stdout.write(`${line}\n`);
};
print(`Hearth memory benchmark — ${new Date().toISOString().slice(0, 10)}, ${cpus().length} × ${cpus()[0]?.model.trim()}, Node ${process.version}`);
print(`data: ${data} (${samples.length} conversations, ${samples.reduce((sum, sample) => sum + sample.qa.length, 0)} questions)`);

for (const name of runs) {
  const distill = name === 'distill';
  const server = await startServer({ withMemoryModel: distill });
  try {
    const run = await recallRun(server.url, samples, distill);
    const file = join(values.out!, `locomo-${name}.json`);
    writeFileSync(file, JSON.stringify(run.results));
    const scored = score(scorer, data, file);
    print(
      `\n[${name}] ${run.turns} turns ingested in ${run.ingestSeconds.toFixed(2)} s (${Math.round(run.turns / run.ingestSeconds)} turns/s, one request per session)`,
    );
    if (distill)
      print(
        `[${name}] distilled into ${run.distilled.episodes} episodes and ${run.distilled.facts} facts; flush waited ${run.distillSeconds.toFixed(1)} s; still pending: ${run.distilled.pending}`,
      );
    print(scored.output.trimEnd());
    print(`[${name}] R@800t (categories 1-4): ${scored.recall.toFixed(1)}   results: ${file}`);
  } finally {
    await server.close();
  }
}

if (loadTurns > 0) {
  const server = await startServer({ withMemoryModel: false });
  try {
    const figures = await loadRun(server.url, samples, loadTurns);
    print(`\n[load] ingest with skip_extraction: ${Math.round(figures.ingestTurnsPerSecond)} turns/s (${figures.turns} turns, 1000 per request)`);
    print(
      `[load] POST /memory/search (transcript, limit 10) over ${figures.turns} turns in one agent: p50 ${figures.search.p50.toFixed(1)} ms, p95 ${figures.search.p95.toFixed(1)} ms (${figures.search.queries} queries)`,
    );
    print(`[load] POST /memory/context (800 tokens) over the same: p50 ${figures.context.p50.toFixed(1)} ms, p95 ${figures.context.p95.toFixed(1)} ms`);
  } finally {
    await server.close();
  }
}
{
  const server = await startServer({ withMemoryModel: false });
  try {
    const stall = await stallRun(server.url, samples);
    print(
      `\n[stall] one ingest of ${stall.turns} turns (${stall.megabytes.toFixed(1)} MiB) took ${stall.ingestSeconds.toFixed(2)} s; longest event-loop stall ${stall.loopMaxMs.toFixed(1)} ms (${((stall.loopMaxMs / 1000 / stall.ingestSeconds) * 100).toFixed(1)}% of the ingest), p99 ${stall.loopP99Ms.toFixed(1)} ms`,
    );
    print(
      `[stall] GET /health every 10 ms meanwhile: ${stall.health.answered} answered, p50 ${stall.health.p50.toFixed(1)} ms, max ${stall.health.max.toFixed(1)} ms`,
    );
  } finally {
    await server.close();
  }
}
writeFileSync(join(values.out!, 'memory-bench.txt'), `${lines.join('\n')}\n`);
