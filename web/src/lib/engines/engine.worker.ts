/// <reference lib="webworker" />
/**
 * The worker every in-browser engine runs in, so that loading and generating never block
 * the page. It answers calls of the BrowserEngine interface; callbacks become messages.
 */
import type { FromWorker, ToWorker } from './protocol';
import { EngineError, type BrowserEngine, type EngineKind } from './types';
import { WebLlmEngine } from './webllm';
import { WllamaEngine } from './wllama';

declare const self: DedicatedWorkerGlobalScope;

const engines: Record<EngineKind, BrowserEngine> = { wllama: new WllamaEngine(), webllm: new WebLlmEngine() };
const running = new Map<number, AbortController>();
const post = (message: FromWorker) => self.postMessage(message);

self.onmessage = async (event: MessageEvent<ToWorker>) => {
  const message = event.data;
  if (message.type === 'cancel') {
    running.get(message.id)?.abort(new DOMException('The reply was stopped.', 'AbortError'));
    return;
  }
  const { id, engine: kind, method, args } = message;
  const controller = new AbortController();
  running.set(id, controller);
  const engine = engines[kind];
  try {
    let value: unknown;
    switch (method) {
      case 'load':
        value = await engine.load(args[0] as string, (progress) => post({ type: 'progress', id, ...progress }));
        break;
      case 'chat':
        value = await engine.chat(args[0] as Parameters<BrowserEngine['chat']>[0], (text) => post({ type: 'delta', id, text }), controller.signal);
        break;
      case 'remove':
        value = await engine.remove(args[0] as string);
        break;
      default:
        value = await engine[method]();
    }
    post({ type: 'result', id, value });
  } catch (error) {
    const known = error instanceof EngineError ? error : null;
    const name = controller.signal.aborted ? 'AbortError' : error instanceof Error ? error.name : 'Error';
    post({ type: 'error', id, name, message: error instanceof Error ? error.message : String(error), code: known?.code ?? null });
  } finally {
    running.delete(id);
  }
};
