import { HearthError } from '../errors.js';

/** A request waiting for a sequence (or slot) of a model; `value` is what it is handed. */
export interface Waiter<Value> {
  resolve: (value: Value) => void;
  reject: (error: unknown) => void;
}

/**
 * The one line both engines keep in front of a model's sequences: a request beyond `queueLimit`
 * waiting ones gets a 429 with Retry-After; otherwise it joins the line (first in, first out) until a
 * sequence is handed to it or its signal aborts, which takes it out of the line.
 */
export function joinLine<Value, Entry extends Waiter<Value>>(
  line: { waiting: Entry[]; capacity: number; queueLimit: number; waitSeconds: () => number },
  signal: AbortSignal,
  entry: (handlers: Waiter<Value>) => Entry,
): Promise<Value> {
  const { waiting } = line;
  if (waiting.length >= line.queueLimit) {
    const retryAfter = line.waitSeconds();
    throw new HearthError(
      'rate_limit_exceeded',
      `All ${line.capacity} sequences of this model are busy and ${waiting.length} requests are waiting. Retry in about ${retryAfter} s.`,
      { retryAfter },
    );
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      const index = waiting.indexOf(waiter);
      if (index >= 0) waiting.splice(index, 1);
      reject(signal.reason);
    };
    const waiter = entry({
      resolve: (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      reject,
    });
    signal.addEventListener('abort', onAbort, { once: true });
    waiting.push(waiter);
  });
}

/** A running generation as the wait estimate sees it. */
export interface RunningGeneration {
  generated: number;
  /** The most tokens it may produce (max_tokens, or the room left in the context). */
  limit: number;
}

/**
 * Seconds until the first running generation is expected to finish and free its sequence, which
 * is when a request refused for a full queue can next be accepted. A generation is expected to run
 * to the typical length of recent completions (capped by its limit), and each of its remaining
 * tokens takes one step.
 */
export function secondsUntilFirstFree(running: RunningGeneration[], stepMs: number | undefined, typicalTokens: number | undefined): number {
  if (running.length === 0 || stepMs === undefined) return 1;
  const remaining = running.map(({ generated, limit }) => {
    const expected = Math.min(limit, Math.max(generated + 1, typicalTokens ?? limit));
    return Math.max(1, expected - generated);
  });
  return Math.max(1, Math.ceil((Math.min(...remaining) * stepMs) / 1000));
}
