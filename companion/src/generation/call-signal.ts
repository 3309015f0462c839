/**
 * A signal that follows `parent` but is let go after one call: every call adds its own abort
 * listeners, and a long run (an agent's) must not collect them on its one signal.
 */
export async function withCallSignal<T>(parent: AbortSignal, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) onAbort();
  else parent.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(controller.signal);
  } finally {
    parent.removeEventListener('abort', onAbort);
  }
}
