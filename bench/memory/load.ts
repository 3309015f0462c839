import type { MemorySearchResponse } from '#shared/api/memory.js';
import { percentile, post } from './client.js';
import type { Sample } from './locomo.js';
import { allTurnTexts } from './locomo.js';

export interface LoadFigures {
  turns: number;
  ingestTurnsPerSecond: number;
  search: { p50: number; p95: number; queries: number };
  context: { p50: number; p95: number; queries: number };
}

/** A deterministic pseudo-random sequence, so every run ingests the same synthetic transcript. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * Ingests `total` synthetic turns (pairs of LoCoMo lines drawn at random) into one agent with
 * skip_extraction, in requests of `batch` turns, then times search and context on it with the
 * LoCoMo questions.
 */
export async function loadRun(url: string, samples: Sample[], total: number, batch = 1000, queries = 400): Promise<LoadFigures> {
  const texts = allTurnTexts(samples).filter(Boolean);
  const next = random(7);
  const pick = () => texts[Math.floor(next() * texts.length)]!;
  const agent = 'bench-load';
  let sent = 0;
  let day = 0;
  const started = performance.now();
  while (sent < total) {
    const size = Math.min(batch, total - sent);
    const turns = Array.from({ length: size }, () => ({ user: pick(), assistant: pick() }));
    const date = new Date(Date.UTC(2020, 0, 1) + day++ * 86_400_000).toISOString().slice(0, 10);
    await post(`${url}/memory/ingest`, { agent_id: agent, conversation_id: `load-${day}`, session_date: date, turns, skip_extraction: true });
    sent += size;
  }
  const ingestTurnsPerSecond = total / ((performance.now() - started) / 1000);
  const questions = samples.flatMap((sample) => sample.qa.map((item) => item.question)).slice(0, queries);
  const time = async (path: string, body: (query: string) => unknown) => {
    const latencies: number[] = [];
    for (const question of questions.slice(0, 20)) await post(`${url}${path}`, body(question));
    for (const question of questions) {
      const begun = performance.now();
      await post<MemorySearchResponse>(`${url}${path}`, body(question));
      latencies.push(performance.now() - begun);
    }
    return { p50: percentile(latencies, 0.5), p95: percentile(latencies, 0.95), queries: latencies.length };
  };
  const search = await time('/memory/search', (query) => ({ agent_id: agent, query, scope: 'transcript', limit: 10 }));
  const context = await time('/memory/context', (query) => ({ agent_id: agent, query }));
  return { turns: total, ingestTurnsPerSecond, search, context };
}
