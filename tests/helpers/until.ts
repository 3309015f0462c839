import { vi } from 'vitest';

/** How long a wait for a condition may take: as long as the projects give expect.poll. */
export const PATIENCE_MS = 20_000;

/**
 * Waits until `check` gives a value (anything but undefined) and returns it, checking again every
 * 25 ms: it passes as soon as the condition holds and fails after `timeout` (20 s unless a longer
 * one is given), naming `what` it waited for (a function: read when it fails). It measures nothing. Unlike expect.poll it may be
 * used in hooks too.
 */
export async function until<T>(check: () => T | undefined | Promise<T | undefined>, what: string | (() => string), timeout = PATIENCE_MS): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await check();
      if (value === undefined) throw new Error(`timed out after ${timeout} ms waiting for ${typeof what === 'string' ? what : what()}`);
      return value;
    },
    { timeout, interval: 25 },
  );
}

/** Waits until `condition` holds (see `until`). */
export async function untilTrue(condition: () => boolean | Promise<boolean>, what: string | (() => string), timeout = PATIENCE_MS): Promise<void> {
  await until(async () => ((await condition()) ? true : undefined), what, timeout);
}
