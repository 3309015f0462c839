import { expect } from 'vitest';

/** What a promise rejects with, or undefined when it resolves: for asserting on the error a client throws. */
export function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** The error a promise rejects with, asserted to be a `type` (an official client's error class, such as OpenAI.BadRequestError). */
export async function rejectedWith<E>(promise: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const error = await rejectionOf(promise);
  expect(error).toBeInstanceOf(type);
  return error as E;
}
