import { describe, expect, it } from 'vitest';
import { EngineHost } from '$lib/engines/host';
import type { FromWorker, ToWorker } from '$lib/engines/protocol';
import { EngineError } from '$lib/engines/types';

/** A stand-in for the engine worker: `script` answers each call. */
class FakeWorker {
  onmessage: ((event: MessageEvent<FromWorker>) => void) | null = null;
  onerror: ((event: ErrorEvent) => void) | null = null;
  sent: ToWorker[] = [];
  terminated = false;
  constructor(private readonly script: (message: ToWorker, reply: (message: FromWorker) => void) => void) {}
  postMessage(message: ToWorker) {
    this.sent.push(message);
    queueMicrotask(() => this.script(message, (reply) => this.onmessage?.({ data: reply } as MessageEvent<FromWorker>)));
  }
  terminate() {
    this.terminated = true;
  }
}

function host(script: ConstructorParameters<typeof FakeWorker>[0]) {
  const worker = new FakeWorker(script);
  return { worker, host: new EngineHost(() => worker as unknown as Worker) };
}

describe('EngineHost', () => {
  it('carries a call and its result', async () => {
    const { host: engines, worker } = host((message, reply) => {
      if (message.type === 'call') reply({ type: 'result', id: message.id, value: { kind: message.engine, available: true, reason: null, details: {} } });
    });
    expect(await engines.engine('wllama').status()).toEqual({ kind: 'wllama', available: true, reason: null, details: {} });
    expect(worker.sent).toEqual([{ type: 'call', id: 1, engine: 'wllama', method: 'status', args: [] }]);
  });

  it('streams deltas and progress to the callbacks', async () => {
    const { host: engines } = host((message, reply) => {
      if (message.type !== 'call') return;
      if (message.method === 'load') {
        reply({ type: 'progress', id: message.id, fraction: 0.5, text: 'half' });
        reply({ type: 'result', id: message.id, value: undefined });
      } else {
        reply({ type: 'delta', id: message.id, text: 'Hel' });
        reply({ type: 'delta', id: message.id, text: 'lo' });
        reply({ type: 'result', id: message.id, value: { text: 'Hello', finishReason: 'stop', promptTokens: 3, completionTokens: 2, tokensPerSecond: 100 } });
      }
    });
    const progress: unknown[] = [];
    await engines.engine('wllama').load('tiny.gguf', (update) => progress.push(update));
    expect(progress).toEqual([{ fraction: 0.5, text: 'half' }]);
    const deltas: string[] = [];
    const result = await engines.engine('wllama').chat({ model: 'tiny.gguf', messages: [] }, (text) => deltas.push(text), new AbortController().signal);
    expect(deltas).toEqual(['Hel', 'lo']);
    expect(result.text).toBe('Hello');
  });

  it('sends a cancel for an aborted chat and rejects with AbortError', async () => {
    const { host: engines, worker } = host((message, reply) => {
      if (message.type === 'cancel') reply({ type: 'error', id: message.id, name: 'AbortError', message: 'stopped', code: null });
    });
    const controller = new AbortController();
    const reply = engines.engine('webllm').chat({ model: 'm', messages: [] }, () => undefined, controller.signal);
    controller.abort();
    await expect(reply).rejects.toMatchObject({ name: 'AbortError' });
    expect(worker.sent.map((message) => message.type)).toEqual(['call', 'cancel']);
  });

  it('turns worker errors into EngineError with their code', async () => {
    const { host: engines } = host((message, reply) => {
      if (message.type === 'call') reply({ type: 'error', id: message.id, name: 'EngineError', message: 'not stored', code: 'not_stored' });
    });
    const error = await engines
      .engine('wllama')
      .load('gone.gguf', () => undefined)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(EngineError);
    expect(error).toMatchObject({ message: 'not stored', code: 'not_stored' });
  });

  it('fails every pending call when the worker crashes, and starts a new worker next time', async () => {
    let workers = 0;
    let current: FakeWorker | null = null;
    const engines = new EngineHost(() => {
      workers += 1;
      current = new FakeWorker((message, reply) => {
        if (workers > 1 && message.type === 'call') reply({ type: 'result', id: message.id, value: [] });
      });
      return current as unknown as Worker;
    });
    const pending = engines.engine('wllama').models();
    current!.onerror?.({ message: 'out of memory' } as ErrorEvent);
    await expect(pending).rejects.toThrow('The in-browser engine stopped: out of memory');
    expect(await engines.engine('wllama').models()).toEqual([]);
    expect(workers).toBe(2);
  });
});
