import { afterAll, beforeAll } from 'vitest';

/** Something a file's (or a describe block's) tests share, read inside tests and hooks. */
export interface PerFile<T> {
  /** The thing; throws when read before it was started (at the top level of a file, say). */
  readonly value: T;
  /** Whether it was started (false when starting it failed). */
  readonly started: boolean;
}

/** Starts something before the first test and stops it after the last; `what` names it in the error for an early read. */
export function perFile<T>(what: string, start: () => Promise<T>, stop: (value: T) => Promise<void>): PerFile<T> {
  let current: { value: T } | undefined;
  beforeAll(async () => {
    current = { value: await start() };
  });
  afterAll(async () => {
    if (current) await stop(current.value);
  });
  return {
    get value() {
      if (!current) throw new Error(`${what} starts before the first test: use it inside tests and hooks.`);
      return current.value;
    },
    get started() {
      return current !== undefined;
    },
  };
}
