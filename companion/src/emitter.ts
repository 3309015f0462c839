/**
 * A typed event emitter: any number of listeners per event, each added with `on` and removed with
 * the function `on` returns. A second listener never replaces the first (as assigning a callback
 * field did), and a listener that throws does not keep the others from hearing the event: the
 * first error is thrown once every listener has heard it.
 */

type Listener<Args extends unknown[]> = (...args: Args) => void;
/** How listeners are kept: each set holds listeners of one event, so its arguments are that event's. */
type Stored = (...args: unknown[]) => void;

export class Emitter<Events extends { [name: string]: unknown[] }> {
  private readonly listeners = new Map<keyof Events, Set<Stored>>();

  /** Adds a listener; the function returned removes it (calling it twice is harmless). */
  on<Name extends keyof Events>(name: Name, listener: Listener<Events[Name]>): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    const stored = listener as Stored;
    set.add(stored);
    return () => void set.delete(stored);
  }

  emit<Name extends keyof Events>(name: Name, ...args: Events[Name]): void {
    const set = this.listeners.get(name);
    if (!set || set.size === 0) return;
    let failure: { error: unknown } | undefined;
    // A copy: a listener may remove itself (or another) while the event is delivered.
    for (const listener of [...set]) {
      try {
        listener(...args);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
  }

  /** How many listeners an event has (tests, and owners checking they cleaned up). */
  listenerCount(name: keyof Events): number {
    return this.listeners.get(name)?.size ?? 0;
  }
}
