/** What a promise rejects with, or undefined when it resolves: for asserting on the error a client throws. */
export function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}
