/**
 * Runs a store's work and answers its result; when it throws, `fail` records the error and
 * answers the fallback. `settle` runs after either (it clears the store's busy flag).
 */
export async function attempt<T, F>(work: () => Promise<T>, fail: (error: unknown) => F, settle: () => void): Promise<T | F> {
  try {
    return await work();
  } catch (error) {
    return fail(error);
  } finally {
    settle();
  }
}
