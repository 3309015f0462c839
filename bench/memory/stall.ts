import { monitorEventLoopDelay } from 'node:perf_hooks';
import { get, percentile, post } from './client.js';
import type { Sample } from './locomo.js';
import { allTurnTexts } from './locomo.js';

export interface StallFigures {
  turns: number;
  megabytes: number;
  ingestSeconds: number;
  /** Event-loop delay while the ingest ran (the server runs in this process). */
  loopMaxMs: number;
  loopP99Ms: number;
  /** GET /health, asked every 10 ms while the ingest ran: time from when each was due to its answer. */
  health: { answered: number; p50: number; max: number };
}

/**
 * One large POST /memory/ingest (10,000 turns of LoCoMo text, about 7.6 MiB) while /health is
 * asked every 10 ms: how long the event loop stalls, and how long /health waits, during it.
 */
export async function stallRun(url: string, samples: Sample[], turns = 10_000): Promise<StallFigures> {
  const texts = allTurnTexts(samples).filter(Boolean);
  const long = (index: number) => `${texts[index % texts.length]} ${texts[(index * 7 + 3) % texts.length]} ${texts[(index * 13 + 5) % texts.length]}`;
  const body = {
    agent_id: 'bench-stall',
    conversation_id: 'stall',
    skip_extraction: true,
    turns: Array.from({ length: turns }, (_, index) => ({ user: long(index), assistant: long(index + 1) })),
  };
  const megabytes = Buffer.byteLength(JSON.stringify(body)) / 1048576;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const healthTimes: number[] = [];
  let running = true;
  const probe = (async () => {
    while (running) {
      // Counted from when the probe was due, so time spent waiting for a blocked loop counts too.
      const due = performance.now() + 10;
      await new Promise((resolve) => setTimeout(resolve, 10));
      await get(`${url}/health`);
      healthTimes.push(performance.now() - due);
    }
  })();
  delay.enable();
  const started = performance.now();
  await post(`${url}/memory/ingest`, body);
  const ingestSeconds = (performance.now() - started) / 1000;
  delay.disable();
  running = false;
  await probe;
  return {
    turns,
    megabytes,
    ingestSeconds,
    loopMaxMs: delay.max / 1e6,
    loopP99Ms: delay.percentile(99) / 1e6,
    health: { answered: healthTimes.length, p50: percentile(healthTimes, 0.5), max: Math.max(...healthTimes) },
  };
}
