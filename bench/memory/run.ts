import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../companion/src/app.js';
import { silentLogger } from '../../companion/src/logger.js';
import { createServices, type Services } from '../../companion/src/services.js';
import type { FastifyInstance } from 'fastify';
import type { MemoryAgentStatus, MemoryContextResponse, MemoryFlushResponse } from '#shared/api/memory.js';
import { writeTinyModel } from '../../scripts/gguf/write-model.js';
import { get, post } from './client.js';
import { agentOf, sessionRequests, type Sample } from './locomo.js';

export interface Server {
  url: string;
  services: Services;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** The real app on a fresh data directory, listening on a free loopback port. */
export async function startServer(options: { withMemoryModel: boolean }): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'hearth-memory-bench-'));
  mkdirSync(join(dataDir, 'models'), { recursive: true });
  const memory = options.withMemoryModel ? '\nmemory:\n  model: tiny\n' : '\n';
  // Written here, not through the tests' model helpers: they register vitest hooks, which need vitest.
  if (options.withMemoryModel) await writeTinyModel(join(dataDir, 'models', 'tiny.gguf'), { size: 'tiny' });
  writeFileSync(join(dataDir, 'config.yaml'), `version: 1\nmodels:\n  external_sources: false\n  threads: 1\n  context_size: 2048${memory}`);
  const services = await createServices({ dataDir, externalSources: false, log: silentLogger, version: 'bench' });
  const app = await buildApp({ services, webRoot: '/nonexistent' });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return {
    url,
    services,
    app,
    async close() {
      await app.close();
      await services.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RecallRun {
  turns: number;
  ingestSeconds: number;
  distillSeconds: number;
  distilled: { episodes: number; facts: number; pending: number };
  results: Record<string, string[]>;
}

/** Ingests every session through POST /memory/ingest, distils when asked, and asks /memory/context per question. */
export async function recallRun(url: string, samples: Sample[], distill: boolean): Promise<RecallRun> {
  const run: RecallRun = { turns: 0, ingestSeconds: 0, distillSeconds: 0, distilled: { episodes: 0, facts: 0, pending: 0 }, results: {} };
  let started = performance.now();
  for (const sample of samples) {
    for (const body of sessionRequests(sample, !distill)) {
      await post(`${url}/memory/ingest`, body);
      run.turns += body.turns.length;
    }
  }
  run.ingestSeconds = (performance.now() - started) / 1000;
  if (distill) {
    started = performance.now();
    for (const sample of samples) {
      // Sessions were distilled as each next one began (a session change); flush distils the last.
      await post<MemoryFlushResponse>(`${url}/memory/flush`, { agent_id: agentOf(sample) });
      // What consolidation then makes of it (promotion, merging) is part of the distilled run.
      await post(`${url}/memory/consolidate`, { agent_id: agentOf(sample) });
      const status = await get<MemoryAgentStatus>(`${url}/memory/agents/${agentOf(sample)}`);
      run.distilled.episodes += status.episodes;
      run.distilled.facts += status.facts.pinned + status.facts.candidate;
      run.distilled.pending += status.pending_signals;
    }
    run.distillSeconds = (performance.now() - started) / 1000;
  }
  for (const sample of samples) {
    for (const [index, item] of sample.qa.entries()) {
      const context = await post<MemoryContextResponse>(`${url}/memory/context`, { agent_id: agentOf(sample), query: item.question });
      run.results[`${sample.sample_id}#${index}`] = context.items.map((entry) => entry.text);
    }
  }
  return run;
}

/** Runs the dependency-free scorer and returns its output and the headline R@800t. */
export function score(scorer: string, data: string, resultsFile: string): { output: string; recall: number } {
  const finished = spawnSync(process.execPath, [scorer, data, resultsFile, '--quiet'], { encoding: 'utf8' });
  if (finished.status !== 0) throw new Error(`score.mjs failed: ${finished.stderr}`);
  const headline = finished.stdout.split('\n').find((line) => line.startsWith('ALL cat 1-4'));
  const numbers = headline?.replace('ALL cat 1-4 (headline)', '').trim().split(/\s+/).map(Number) ?? [];
  // Columns: n, R@5, R@10, R@800t, ...
  return { output: finished.stdout, recall: numbers[3] ?? Number.NaN };
}
