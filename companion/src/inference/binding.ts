/**
 * node-llama-cpp, loaded on first use. Importing it takes most of a second of CPU (its native
 * addon's JavaScript side and its dependencies), which every start of the companion, every
 * `hearth` command and every test that builds the app paid before any model was asked for.
 *
 * `loadBinding()` loads it once; `binding()` is the loaded module for code that only runs with a
 * model, a chat wrapper or a GGUF file's metadata in hand, which exist only once it has loaded
 * (`loadLlama()` and every metadata reader await `loadBinding()` first).
 */
import type * as LlamaCpp from 'node-llama-cpp';
import { onFirstUse } from '../first-use.js';

type Binding = typeof LlamaCpp;

const llamaCpp = onFirstUse<Binding>(() => import('node-llama-cpp'));

export function loadBinding(): Promise<Binding> {
  return llamaCpp.load();
}

export function binding(): Binding {
  const loaded = llamaCpp.loaded();
  if (!loaded) throw new Error('node-llama-cpp is used before it was loaded: await loadBinding() first');
  return loaded;
}
