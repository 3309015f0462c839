import { afterEach, describe, expect, it, vi } from 'vitest';
import type { EngineHost } from '$lib/engines/host';
import type { BrowserEngine, BrowserModel, EngineKind } from '$lib/engines/types';
import type { ModelRecord } from '#shared/api/openai.js';
import { stubFetch } from '../helpers/fetch-stub.js';
import { modelRecord } from '../helpers/model-record.js';

const saved: { name: string; size: number; origin: string; bytes: number }[] = [];
vi.mock('$lib/engines/gguf-files', () => ({
  saveGguf: async (
    body: ReadableStream<Uint8Array>,
    options: { name: string; size: number; origin: string; onProgress?: (written: number, size: number) => void; signal?: AbortSignal },
  ) => {
    let bytes = 0;
    const reader = body.getReader();
    for (;;) {
      options.signal?.throwIfAborted();
      const { value, done } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      options.onProgress?.(bytes, options.size);
    }
    saved.push({ name: options.name, size: options.size, origin: options.origin, bytes });
    return { id: `${options.name}.gguf`, sizeBytes: bytes, origin: options.origin, savedAt: 0 };
  },
}));

const { ModelsStore, capabilityWords, formatBytes } = await import('$lib/stores/models.svelte');

const stored: BrowserModel = {
  engine: 'wllama',
  id: 'tiny.gguf',
  name: 'tiny',
  sizeBytes: 644096,
  stored: true,
  runnable: true,
  reason: null,
  origin: 'companion: tiny',
};
const mlc: BrowserModel[] = [
  { engine: 'webllm', id: 'cached-q4f32', name: 'cached-q4f32', sizeBytes: 1, stored: true, runnable: true, reason: null, origin: null },
  { engine: 'webllm', id: 'big-q4f16', name: 'big-q4f16', sizeBytes: 1, stored: true, runnable: false, reason: 'needs shader-f16', origin: null },
  { engine: 'webllm', id: 'offered', name: 'offered', sizeBytes: 1, stored: false, runnable: true, reason: null, origin: null },
];

function fakeHost(available: Record<EngineKind, boolean>, models: Record<EngineKind, BrowserModel[]>, load?: BrowserEngine['load']): () => EngineHost {
  const engine = (kind: EngineKind): BrowserEngine => ({
    kind,
    status: async () => ({ kind, available: available[kind], reason: available[kind] ? null : 'no', details: {} }),
    models: async () => models[kind],
    load: load ?? (async () => undefined),
    chat: async () => {
      throw new Error('not used');
    },
    unload: async () => undefined,
    remove: async () => undefined,
  });
  return () => ({ engine }) as unknown as EngineHost;
}

afterEach(() => {
  vi.unstubAllGlobals();
  saved.length = 0;
});

// `extra` may hold what an older companion sent (source "remote"), which the type no longer has.
const record = (id: string, extra: object = {}) => modelRecord(id, { size_bytes: 644096, ...extra });
/** The companion answers every request with this model list. */
const listing = (...data: ModelRecord[]) => stubFetch(async () => Response.json({ object: 'list', data }));

describe('ModelsStore', () => {
  it('groups chat models by where they run', async () => {
    listing(
      record('tiny', { loaded: true }),
      record('embed', { capabilities: ['embedding'] }),
      record('openai/gpt', { source: 'provider', owned_by: 'openai' }),
    );
    const models = new ModelsStore(fakeHost({ wllama: true, webllm: true }, { wllama: [stored], webllm: mlc }));
    await models.refresh();

    expect(models.groups.map((group) => [group.label, group.options.map((option) => option.key)])).toEqual([
      ['This machine', ['companion:tiny']],
      ['Providers', ['companion:openai/gpt']],
      ['In this browser', ['wllama:tiny.gguf', 'webllm:cached-q4f32']],
    ]);
    expect(models.option('companion:tiny')?.detail).toBe('644.1 KB · loaded');
    expect(models.option('companion:openai/gpt')?.detail).toBe('provider openai');
    expect(models.browserOptions.map((option) => option.key)).toEqual(['wllama:tiny.gguf', 'webllm:cached-q4f32']);
    expect(models.option('wllama:tiny.gguf')?.detail).toBe('on the processor · 644.1 KB');
  });

  it('reads an older companion\'s source "remote" as a provider model, for one release', async () => {
    listing(record('tiny'), record('openai/gpt', { source: 'remote', owned_by: 'openai', loaded: undefined, size_bytes: undefined }));
    const models = new ModelsStore(fakeHost({ wllama: false, webllm: false }, { wllama: [], webllm: [] }));
    await models.refreshCompanion();

    expect(models.companion.map((model) => [model.id, model.source])).toEqual([
      ['tiny', 'local'],
      ['openai/gpt', 'provider'],
    ]);
    expect(models.groups.map((group) => [group.label, group.options.map((option) => option.key)])).toEqual([
      ['This machine', ['companion:tiny']],
      ['Providers', ['companion:openai/gpt']],
      ['In this browser', []],
    ]);
    expect(models.option('companion:openai/gpt')).toMatchObject({ detail: 'provider openai', loaded: null });
  });

  it('lists no browser models of an engine that is unavailable, and keeps the companion error', async () => {
    stubFetch(async () => Promise.reject(new TypeError('Failed to fetch')));
    const models = new ModelsStore(fakeHost({ wllama: true, webllm: false }, { wllama: [stored], webllm: mlc }));
    await models.refresh();
    expect(models.companionError).toMatch(/could not be reached/);
    expect(models.browser).toEqual([stored]);
    expect(models.engines.webllm?.available).toBe(false);
  });

  it('copies a companion model into the browser with progress, then lists it', async () => {
    const bytes = new Uint8Array(1000);
    stubFetch(async (path, init) => {
      if (init.method === 'HEAD') return new Response(null, { headers: { 'content-length': '1000' } });
      if (path.endsWith('/file')) {
        let sent = 0;
        return new Response(
          new ReadableStream({
            pull(controller) {
              if (sent >= 1000) return controller.close();
              controller.enqueue(bytes.slice(sent, sent + 250));
              sent += 250;
            },
          }),
          { headers: { 'content-length': '1000' } },
        );
      }
      return Response.json({ object: 'list', data: [] });
    });
    const models = new ModelsStore(fakeHost({ wllama: true, webllm: false }, { wllama: [stored], webllm: [] }));
    expect(await models.sizeOf('tiny')).toBe(1000);
    await models.downloadFromCompanion('tiny');
    expect(models.downloads.tiny).toEqual({ received: 1000, total: 1000, status: 'done', error: null });
    expect(saved).toEqual([{ name: 'tiny', size: 1000, origin: 'companion: tiny', bytes: 1000 }]);
    expect(models.browser).toEqual([stored]);
  });

  it('reports a model that cannot be prepared', async () => {
    const models = new ModelsStore(
      fakeHost({ wllama: true, webllm: true }, { wllama: [], webllm: [] }, async (_model, onProgress) => {
        onProgress({ fraction: 0.1, text: 'Fetching' });
        throw new Error('offered is not stored in this browser and the network is off.');
      }),
    );
    expect(await models.prepare({ runtime: 'webllm', id: 'offered' })).toBe(false);
    expect(models.prepareError).toBe('offered is not stored in this browser and the network is off.');
    expect(models.preparing).toBeNull();
  });

  it('formats sizes and capabilities', () => {
    expect([formatBytes(512), formatBytes(644096), formatBytes(1.2e9), formatBytes(null)]).toEqual(['512 B', '644.1 KB', '1.2 GB', 'size unknown']);
    expect(capabilityWords(['chat', 'completion', 'fim', 'tools', 'reasoning'])).toBe('Chat, Text completion, Fill-in-the-middle, Tools, Thinking');
    expect(capabilityWords(undefined)).toBe('');
  });
});
