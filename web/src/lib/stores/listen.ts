/** One event listener: where, which event, and the handler (typed for the event it takes). */
export type Listener = [target: EventTarget, type: string, handler: (event: never) => void];

/** Adds each listener and answers one function that removes them all (a store's watch() returns it). */
export function listen(...listeners: Listener[]): () => void {
  for (const [target, type, handler] of listeners) target.addEventListener(type, handler as EventListener);
  return () => {
    for (const [target, type, handler] of listeners) target.removeEventListener(type, handler as EventListener);
  };
}
