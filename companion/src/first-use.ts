/**
 * A library loaded on first use (node-llama-cpp, the MCP SDK): `load()` imports it once (again
 * after a failed try), `loaded()` is it once loaded and undefined before.
 */
export function onFirstUse<T>(importer: () => Promise<T>): { load(): Promise<T>; loaded(): T | undefined } {
  let value: T | undefined;
  let loading: Promise<T> | undefined;
  return {
    load() {
      loading ??= importer().then(
        (module) => (value = module),
        (error: unknown) => {
          loading = undefined;
          throw error;
        },
      );
      return loading;
    },
    loaded: () => value,
  };
}
