/**
 * How long GET /health takes while some work runs. The asking is done from a worker thread, so
 * a companion whose event loop is blocked (in this process or another) shows up as a slow
 * answer rather than as a timer that also waited.
 */
import { Worker } from 'node:worker_threads';

const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
let stopping = false;
const waits = [];
parentPort.on('message', () => (stopping = true));
(async () => {
  while (!stopping) {
    const started = performance.now();
    await fetch(workerData.url + '/health').then((response) => response.text());
    waits.push(performance.now() - started);
    if (waits.length === 1) parentPort.postMessage({ ready: true });
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  parentPort.postMessage({ waits });
})();
`;

export interface HealthDuring {
  /** How long the work took. */
  ms: number;
  /** /health answers received while it ran, and the slowest of them. */
  answers: number;
  slowest: number;
}

export async function healthDuring(url: string, work: () => Promise<void>): Promise<HealthDuring> {
  const poller = new Worker(POLLER, { eval: true, workerData: { url } });
  const messages: { ready?: boolean; waits?: number[] }[] = [];
  let notify: (() => void) | undefined;
  poller.on('message', (message) => {
    messages.push(message);
    notify?.();
  });
  const next = (match: (message: { ready?: boolean; waits?: number[] }) => boolean) =>
    new Promise<{ ready?: boolean; waits?: number[] }>((resolve) => {
      const check = () => {
        const found = messages.find(match);
        if (found) resolve(found);
      };
      notify = check;
      check();
    });
  await next((message) => message.ready === true);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  poller.postMessage('stop');
  const waits = (await next((message) => message.waits !== undefined)).waits!;
  await poller.terminate();
  return { ms, answers: waits.length, slowest: Math.max(...waits) };
}
