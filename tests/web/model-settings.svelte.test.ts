import { afterEach, describe, expect, it, vi } from 'vitest';
import { changeFor, contextNote, describeEstimate, differs, formFrom, formProblems, settingsOf, type LoadSettings } from '$lib/settings/model-load';
import { ModelSettingsStore } from '$lib/stores/model-settings.svelte';
import type { ModelEstimate } from '#shared/api/admin.js';
import { stubFetch } from '../helpers/fetch-stub.js';

afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

const defaults: LoadSettings = { context_size: 4096, gpu_layers: 'auto', threads: 'auto', parallel: 'auto', projector: 'auto', draft: 'none' };
const MB = 1_000_000;

function estimateFor(settings: LoadSettings, extra: Partial<ModelEstimate> = {}): ModelEstimate {
  const context = Math.min(settings.context_size, 2048);
  const parallel = settings.parallel === 'auto' ? 4 : settings.parallel;
  const contextBytes = (parallel * context * MB) / 1024;
  return {
    id: 'tiny',
    settings,
    saved: {},
    defaults,
    trained_context: 2048,
    context_size: context,
    gpu: false,
    total_layers: 3,
    gpu_layers: 0,
    parallel,
    weights_bytes: 90 * MB,
    context_bytes: contextBytes,
    memory_bytes: 90 * MB + contextBytes,
    gpu_bytes: 0,
    budget_share_bytes: 90 * MB + contextBytes,
    budget_bytes: 8000 * MB,
    fits: 'yes',
    loaded: false,
    ...extra,
  };
}

describe('the load settings form', () => {
  it('shows saved settings as choices and numbers, and turns them back into settings', () => {
    const saved: LoadSettings = { context_size: 1024, gpu_layers: 0, threads: 2, parallel: 'auto', projector: 'auto', draft: 'none' };
    const form = formFrom(saved);
    expect(form).toEqual({
      contextSize: 1024,
      gpu: 'off',
      gpuLayers: null,
      threads: 'fixed',
      threadCount: 2,
      parallel: 'auto',
      parallelCount: null,
      draft: 'none',
    });
    // The estimate is asked for the load numbers; the projector is set in config.yaml, the draft saved apart.
    const { projector: _projector, draft: _draft, ...formSettings } = saved;
    expect(settingsOf(form)).toEqual(formSettings);
    expect(formFrom({ ...defaults, gpu_layers: 12 })).toMatchObject({ gpu: 'layers', gpuLayers: 12 });
    expect(differs(form, saved)).toBe(false);
    expect(differs({ ...form, contextSize: 2048 }, saved)).toBe(true);
    expect(differs({ ...form, draft: 'small' }, saved)).toBe(true);
  });

  it('starts the context at what the model loads with: the setting, capped at its trained context', () => {
    // The default 4096 on a model trained on 2048 loads with 2048: the form says 2048, and that is no change.
    const form = formFrom(defaults, 2048);
    expect(form.contextSize).toBe(2048);
    expect(differs(form, defaults, 2048)).toBe(false);
    expect(changeFor('tiny', form, defaults, {}, 2048)).toEqual({ version: 1, models: { overrides: { tiny: null } } });
    expect(formFrom(defaults, 8192).contextSize).toBe(4096);
    expect(formFrom(defaults).contextSize).toBe(4096);
  });

  it('bounds the context by what the model was trained on', () => {
    const form = formFrom(defaults, 2048);
    expect(formProblems({ ...form, contextSize: 999_999 }, 2048)).toEqual({
      contextSize: 'Use 256 to 2,048 tokens: this model was trained on 2,048, and never uses more.',
    });
    expect(formProblems({ ...form, contextSize: 2049 }, 2048).contextSize).toMatch(/^Use 256 to 2,048 tokens/);
    expect(formProblems({ ...form, contextSize: 2048 }, 2048)).toEqual({});
    // Unknown training context: config.yaml's bound.
    expect(formProblems({ ...form, contextSize: 999_999 })).toEqual({});
    expect(formProblems({ ...form, contextSize: 2_000_000 }).contextSize).toBe('Use 256 to 1,048,576 tokens.');
  });

  it('saves a draft model in the model entry, and none removes it', () => {
    expect(changeFor('tiny', { ...formFrom(defaults), draft: 'small' }, defaults)).toEqual({
      version: 1,
      models: { overrides: { tiny: { context_size: null, gpu_layers: null, threads: null, parallel: null, draft: 'small' } } },
    });
    expect(changeFor('tiny', formFrom({ ...defaults, draft: 'small' }), defaults)).toMatchObject({ models: { overrides: { tiny: { draft: 'small' } } } });
    expect(changeFor('tiny', formFrom(defaults), defaults, { draft: 'small' })).toEqual({ version: 1, models: { overrides: { tiny: null } } });
  });

  it('says what is wrong with a field in words, and leaves invalid fields out of an estimate', () => {
    const form = { ...formFrom(defaults), contextSize: 100, gpu: 'layers' as const, gpuLayers: null, threads: 'fixed' as const, threadCount: 2.5 };
    expect(formProblems(form)).toEqual({
      contextSize: 'Use 256 to 1,048,576 tokens.',
      gpuLayers: 'Enter how many layers go to the GPU.',
      threadCount: 'Use a whole number of threads.',
    });
    expect(formProblems({ ...formFrom(defaults), contextSize: null })).toEqual({ contextSize: 'Enter the context length in tokens.' });
    expect(formProblems({ ...formFrom(defaults), parallel: 'fixed', parallelCount: 65 })).toEqual({ parallelCount: 'Use 1 to 64 requests.' });
    expect(settingsOf(form)).toEqual({ parallel: 'auto' });
    for (const problem of Object.values(formProblems(form))) expect(problem).not.toMatch(/context_size|gpu_layers|threads:|parallel:/);
  });

  it('saves only what differs from the defaults, and removes the entry when nothing does', () => {
    const form = { ...formFrom(defaults), contextSize: 1024, threads: 'fixed' as const, threadCount: 1 };
    expect(changeFor('tiny', form, defaults)).toEqual({
      version: 1,
      models: { overrides: { tiny: { context_size: 1024, gpu_layers: null, threads: 1, parallel: null, draft: null } } },
    });
    expect(changeFor('tiny', formFrom(defaults), defaults)).toEqual({ version: 1, models: { overrides: { tiny: null } } });
    // A projector set in config.yaml keeps the entry: only the form's settings are cleared.
    expect(changeFor('tiny', formFrom(defaults), defaults, { projector: '/models/mmproj.gguf' })).toEqual({
      version: 1,
      models: { overrides: { tiny: { context_size: null, gpu_layers: null, threads: null, parallel: null, draft: null } } },
    });
    // Off is a number of layers (none), not the default.
    expect(changeFor('tiny', { ...formFrom(defaults), gpu: 'off' }, defaults)).toMatchObject({ models: { overrides: { tiny: { gpu_layers: 0 } } } });
  });

  it('puts the estimate and the trained context in words', () => {
    const words = describeEstimate(estimateFor({ ...defaults, context_size: 2048, parallel: 2 }));
    expect(words.memory).toBe('About 94.0 MB: 90.0 MB for the model and 4.0 MB for 2 × 2,048 tokens of context.');
    expect(words.fit).toBe("Fits this machine's memory budget (8.0 GB).");
    expect(describeEstimate(estimateFor(defaults, { fits: 'no' })).fit).toMatch(/^More than the memory budget \(8\.0 GB\): it will not load/);
    expect(describeEstimate(estimateFor(defaults, { fits: 'tight' })).fit).toMatch(/^Only just fits/);
    expect(describeEstimate(estimateFor(defaults, { gpu: true, gpu_layers: 3, gpu_bytes: 50 * MB })).memory).toMatch(
      /50\.0 MB of it on the GPU \(3 of 3 layers\)\.$/,
    );
    expect(contextNote({ ...formFrom(defaults), contextSize: 8192 }, 2048)).toBe('This model was trained on 2,048 tokens: it loads with 2,048.');
    expect(contextNote({ ...formFrom(defaults), contextSize: 1024 }, 2048)).toBe('Trained on 2,048 tokens.');
  });
});

/** The companion's estimate and apply routes for one model, with what was asked. */
function companion(options: { loaded?: boolean } = {}) {
  let saved: Partial<LoadSettings> = {};
  let loaded = options.loaded ?? false;
  const calls: string[] = [];
  const applied: unknown[] = [];
  stubFetch(async (path, init) => {
    const body = init.body ? JSON.parse(String(init.body)) : undefined;
    calls.push(`${init.method ?? 'GET'} ${path}${path.endsWith('/estimate') ? ` ${JSON.stringify(body)}` : ''}`);
    if (path === '/admin/models/tiny/estimate') {
      const settings = { ...defaults, ...saved, ...body } as LoadSettings;
      return Response.json(estimateFor(settings, { saved, loaded }));
    }
    if (path === '/admin/config/apply') {
      applied.push(body);
      const entry = body.document.models.overrides.tiny as Record<string, unknown> | null;
      saved = Object.fromEntries(Object.entries({ ...saved, ...entry }).filter(([key]) => entry && entry[key] !== null));
      return Response.json({
        valid: true,
        applied: true,
        changes: [],
        risks: [],
        restart_required: [],
        reload_required: loaded ? ['tiny'] : [],
        warnings: [],
      });
    }
    if (path === '/admin/models/tiny/drafts') {
      return Response.json({
        id: 'tiny',
        draft: saved.draft ?? null,
        candidates: [
          { id: 'tiny-draft', size_bytes: 10 * MB, same_family: true, suggested: true },
          { id: 'other', size_bytes: 20 * MB, same_family: false, suggested: false, problem: "its vocabulary has 10 tokens, the model's 12" },
        ],
      });
    }
    if (path === '/admin/models/tiny/unload') {
      loaded = false;
      return Response.json({ id: 'tiny', loaded: false, was_loaded: true });
    }
    if (path === '/admin/models/tiny/load') {
      loaded = true;
      return Response.json({ id: 'tiny', loaded: true });
    }
    return Response.json({ error: { message: `no route ${path}`, type: 'invalid_request_error', code: 'route_not_found', param: null } }, { status: 404 });
  });
  return { calls, applied, saved: () => saved };
}

describe('ModelSettingsStore', () => {
  it('opens with the saved settings and their estimate, and estimates again shortly after a change', async () => {
    const companionState = companion();
    const store = new ModelSettingsStore();
    await store.toggle('tiny');
    // The default 4096 on a model trained on 2048: it loads with 2048, and the form says so.
    expect(store.form).toMatchObject({ contextSize: 2048, gpu: 'auto', threads: 'auto', parallel: 'auto', draft: 'none' });
    expect(store.estimate?.context_size).toBe(2048);
    expect(store.canSave).toBe(false);

    vi.useFakeTimers();
    store.form!.contextSize = 512;
    store.changed();
    store.form!.contextSize = 1024;
    store.changed();
    await vi.runAllTimersAsync();
    vi.useRealTimers();
    // One request for the last change, with every setting the form holds.
    expect(companionState.calls.filter((call) => call.startsWith('POST /admin/models/tiny/estimate'))).toEqual([
      'POST /admin/models/tiny/estimate {}',
      'POST /admin/models/tiny/estimate {"context_size":1024,"gpu_layers":"auto","threads":"auto","parallel":"auto"}',
    ]);
    expect(store.estimate?.context_size).toBe(1024);
    expect(store.canSave).toBe(true);
  });

  it('saves through apply, and a model loaded now is loaded again', async () => {
    const companionState = companion({ loaded: true });
    const store = new ModelSettingsStore();
    await store.toggle('tiny');
    store.form!.contextSize = 1024;
    await expect(store.save()).resolves.toBe(true);
    expect(companionState.applied).toEqual([
      {
        document: { version: 1, models: { overrides: { tiny: { context_size: 1024, gpu_layers: null, threads: null, parallel: null, draft: null } } } },
        prune: false,
        confirm_high_risk: false,
      },
    ]);
    expect(companionState.calls).toEqual(expect.arrayContaining(['POST /admin/models/tiny/unload', 'POST /admin/models/tiny/load']));
    expect(companionState.calls.indexOf('POST /admin/models/tiny/unload')).toBeLessThan(companionState.calls.indexOf('POST /admin/models/tiny/load'));
    expect(store.notice).toBe('Saved, and tiny was loaded again with these settings.');
    expect(store.saved?.settings.context_size).toBe(1024);
    expect(store.canSave).toBe(false);

    // Back to the defaults: the model's own entry goes.
    store.useDefaults();
    await store.save();
    expect(companionState.saved()).toEqual({});
  });

  it('does not reload a model that is not loaded, and does not save an invalid form', async () => {
    const companionState = companion();
    const store = new ModelSettingsStore();
    await store.toggle('tiny');
    store.form!.contextSize = 10;
    await expect(store.save()).resolves.toBe(false);
    expect(companionState.applied).toEqual([]);
    store.form!.contextSize = 1024;
    await store.save();
    expect(companionState.calls.some((call) => call.includes('/load') || call.includes('/unload'))).toBe(false);
    expect(store.notice).toBe('Saved. tiny uses these settings the next time it loads.');
    // Opening it again closes it.
    await store.toggle('tiny');
    expect(store.id).toBeNull();
  });

  it('lists the draft choices, and saves the chosen one in the model entry', async () => {
    const companionState = companion();
    const store = new ModelSettingsStore();
    await store.toggle('tiny');
    await vi.waitFor(() => expect(store.drafts?.candidates.map((candidate) => candidate.id)).toEqual(['tiny-draft', 'other']));
    expect(store.canSave).toBe(false);
    store.form!.draft = 'tiny-draft';
    expect(store.canSave).toBe(true);
    await store.save();
    expect(companionState.saved()).toEqual({ draft: 'tiny-draft' });
    expect(store.form?.draft).toBe('tiny-draft');
    expect(store.canSave).toBe(false);
    // Back to none: the entry goes.
    store.form!.draft = 'none';
    await store.save();
    expect(companionState.saved()).toEqual({});
  });
});
