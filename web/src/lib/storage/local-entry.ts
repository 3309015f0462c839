/**
 * One string kept in the localStorage of the companion's own origin (the access key, the admin
 * session's proof): read synchronously when a request is built, so the first request after a
 * load already carries it. Reading and forgetting never throw (storage may be off); storing does,
 * so the caller can say the browser would not keep it.
 */
export interface LocalEntry {
  read(): string | null;
  /** Throws when the browser will not keep it (storage disabled or full). */
  store(value: string): void;
  forget(): void;
}

export function localEntry(name: string): LocalEntry {
  return {
    read() {
      try {
        return globalThis.localStorage?.getItem(name) || null;
      } catch {
        return null;
      }
    },
    store(value) {
      globalThis.localStorage.setItem(name, value);
    },
    forget() {
      try {
        globalThis.localStorage?.removeItem(name);
      } catch {
        // Nothing stored, or storage is disabled: either way nothing is kept.
      }
    },
  };
}
