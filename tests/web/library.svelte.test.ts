import { afterEach, describe, expect, it, vi } from 'vitest';
import { ActivityStore } from '$lib/stores/activity.svelte';
import { LibraryStore } from '$lib/stores/library.svelte';
import type { ModelDownload } from '#shared/api/model-library.js';
import { stubFetch } from '../helpers/fetch-stub.js';

afterEach(() => {
  vi.unstubAllGlobals();
});

const download = (extra: Partial<ModelDownload> = {}): ModelDownload => ({
  id: 'dl_1',
  source: 'owner/repo/model-Q4_K_M.gguf',
  status: 'downloading',
  bytes_done: 10,
  bytes_total: 100,
  bytes_per_second: 5,
  file: 'model-Q4_K_M.gguf',
  model_id: null,
  error: null,
  created_at: '2026-11-23T10:00:00.000Z',
  updated_at: '2026-11-23T10:00:01.000Z',
  ...extra,
});

describe('LibraryStore', () => {
  it('searches the hub through the companion', async () => {
    const fetch = stubFetch(() => Response.json({ data: [{ id: 'owner/repo', downloads: 5, likes: 1, updated_at: null }] }));
    const library = new LibraryStore();
    library.query = 'qwen 0.5b';
    library.sort = 'trending';
    await library.search();
    expect(String(fetch.mock.calls[0]![0])).toBe('/admin/models/search?q=qwen+0.5b&limit=20&sort=trending');
    expect(library.results.map((model) => model.id)).toEqual(['owner/repo']);
    expect(library.searched).toBe(true);
  });

  it('says at once that an offline device cannot search, without asking', async () => {
    const fetch = stubFetch(() => Response.json({ data: [] }));
    vi.stubGlobal('navigator', { onLine: false });
    const library = new LibraryStore();
    await library.search();
    expect(fetch).not.toHaveBeenCalled();
    expect(library.searchError).toMatch(/^This device is offline/);
  });

  it("shows the companion's reason when the hub cannot be reached", async () => {
    stubFetch(() =>
      Response.json(
        { error: { message: 'Hugging Face (hf.co) cannot be reached: DNS lookup failed.', type: 'server_error', code: 'provider_unreachable', param: null } },
        { status: 502 },
      ),
    );
    const library = new LibraryStore();
    await library.search();
    expect(library.searchError).toBe('Hugging Face (hf.co) cannot be reached: DNS lookup failed.');
  });

  it("opens a repository's files with the memory budget", async () => {
    const fetch = stubFetch(() =>
      Response.json({
        id: 'owner/repo',
        memory_budget_bytes: 1000,
        data: [{ name: 'm.gguf', size_bytes: 10, quantization: 'Q4_K_M', fits: 'yes', parts: 1, source: 'owner/repo/m.gguf', projector: null }],
      }),
    );
    const library = new LibraryStore();
    await library.open('owner/repo');
    expect(String(fetch.mock.calls[0]![0])).toBe('/admin/models/search/owner/repo');
    expect(library.files[0]?.fits).toBe('yes');
    expect(library.budgetBytes).toBe(1000);
  });

  it('starts, updates, pauses and forgets downloads, and tells when a model was added', async () => {
    const changed = vi.fn();
    const requests: string[] = [];
    stubFetch((path, init) => {
      requests.push(`${init.method ?? 'GET'} ${path}`);
      if (path.endsWith('/pause')) return Response.json(download({ status: 'paused' }));
      if (init.method === 'DELETE') return Response.json(download({ status: 'completed' }));
      return Response.json(download({ status: 'queued', bytes_done: 0 }), { status: 201 });
    });
    const library = new LibraryStore(changed);
    await library.download('owner/repo/model-Q4_K_M.gguf');
    expect(library.downloadOf('owner/repo/model-Q4_K_M.gguf')?.status).toBe('queued');
    library.update(download());
    expect(library.unfinished).toHaveLength(1);
    await library.pause('dl_1');
    expect(library.downloads[0]?.status).toBe('paused');
    library.update(download({ status: 'completed', bytes_done: 100, model_id: 'model-q4_k_m' }));
    expect(changed).toHaveBeenCalledTimes(1);
    library.update(download({ status: 'completed', bytes_done: 100, model_id: 'model-q4_k_m' }));
    expect(changed).toHaveBeenCalledTimes(1);
    await library.cancel('dl_1');
    expect(library.downloads).toEqual([]);
    expect(requests).toEqual(['POST /admin/models/downloads', 'POST /admin/models/downloads/dl_1/pause', 'DELETE /admin/models/downloads/dl_1']);
  });
});

describe('ActivityStore', () => {
  const hooks = () => ({ modelsChanged: vi.fn(), downloads: vi.fn(), download: vi.fn(), lost: vi.fn() });

  it('keeps load progress per model until the load ends, then says the models changed', () => {
    const calls = hooks();
    const activity = new ActivityStore(calls);
    activity.handle({
      type: 'snapshot',
      memory_budget_bytes: 100,
      samples: [],
      loading: [{ id: 'big', state: 'loading', fraction: 0.1 }],
      downloads: [download()],
    });
    expect(activity.progressOf('big')).toBe(0.1);
    expect(calls.downloads).toHaveBeenCalledWith([download()]);
    // (Re)connected: the model list is read again, as it may have changed while the stream was closed.
    expect(calls.modelsChanged).toHaveBeenCalledTimes(1);
    activity.handle({ type: 'load', load: { id: 'big', state: 'loading', fraction: 0.42 } });
    expect(activity.progressOf('big')).toBe(0.42);
    activity.handle({ type: 'load', load: { id: 'big', state: 'ready' } });
    expect(activity.progressOf('big')).toBeNull();
    expect(calls.modelsChanged).toHaveBeenCalledTimes(2);
    activity.handle({ type: 'load', load: { id: 'bad', state: 'failed', message: 'truncated' } });
    expect(activity.failures).toEqual({ bad: 'truncated' });
  });

  it('keeps the last five minutes of samples and sums the memory in use', () => {
    const activity = new ActivityStore(hooks());
    for (let at = 0; at < 200; at++) {
      activity.handle({
        type: 'sample',
        memory_budget_bytes: 1000,
        sample: {
          at,
          models: [
            { id: 'a', tokens_per_second: at, busy: 1, queued: 0, memory_bytes: 300 },
            { id: 'b', tokens_per_second: 0, busy: 0, queued: 2, memory_bytes: 200 },
          ],
        },
      });
    }
    expect(activity.samples).toHaveLength(150);
    expect(activity.samples[0]?.at).toBe(50);
    expect(activity.memoryUsedBytes).toBe(500);
    expect(activity.budgetBytes).toBe(1000);
  });

  it('says the models changed when a sample has other models loaded (unloaded by the idle timer, loaded by another client)', () => {
    const calls = hooks();
    const activity = new ActivityStore(calls);
    const sample = (at: number, ids: string[]) =>
      activity.handle({
        type: 'sample',
        memory_budget_bytes: 1000,
        sample: { at, models: ids.map((id) => ({ id, tokens_per_second: 0, busy: 0, queued: 0, memory_bytes: 1 })) },
      });
    sample(1, ['a']);
    sample(2, ['a']);
    expect(calls.modelsChanged).not.toHaveBeenCalled();
    sample(3, ['a', 'b']);
    expect(calls.modelsChanged).toHaveBeenCalledTimes(1);
    sample(4, ['b', 'a']);
    sample(5, []);
    expect(calls.modelsChanged).toHaveBeenCalledTimes(2);
  });

  it('passes download changes on and counts a completed one as a model change', () => {
    const calls = hooks();
    const activity = new ActivityStore(calls);
    activity.handle({ type: 'download', download: download({ status: 'completed' }) });
    expect(calls.download).toHaveBeenCalledTimes(1);
    expect(calls.modelsChanged).toHaveBeenCalledTimes(1);
  });
});
