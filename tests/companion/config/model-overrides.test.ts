import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ModelEstimate, ServerStatus } from '#shared/api/admin.js';
import type { ApplyResult, ConfigPlan } from '#shared/api/admin-config.js';
import type { ConfigDocument } from '#shared/api/config.js';
import { asOwner, sharedApp } from '../../helpers/app.js';

/*
 * Per-model load settings (models.overrides): validated like the models section, merged by
 * plan/apply (a null removes a setting), honoured by the engine when it loads that model, named
 * in the plan's reload_required while the model is loaded with the old ones, and estimated by
 * POST /admin/models/{id}/estimate from the GGUF header with the settings proposed.
 */

const hearth = sharedApp({ resetConfig: true });

afterEach(async () => {
  await hearth.services.engine.unload('tiny');
});

const post = (url: string, payload?: unknown): Promise<LightMyRequestResponse> =>
  hearth.app.inject(asOwner({ method: 'POST', url, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) }));

async function apply(document: Record<string, unknown>): Promise<ApplyResult> {
  const response = await post('/admin/config/apply', { document: { version: 1, ...document } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ApplyResult;
}

async function plan(document: Record<string, unknown>): Promise<ConfigPlan> {
  const response = await post('/admin/config/plan', { document: { version: 1, ...document } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ConfigPlan;
}

async function estimate(body: Record<string, unknown> = {}, id = 'tiny'): Promise<ModelEstimate> {
  const response = await post(`/admin/models/${id}/estimate`, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as ModelEstimate;
}

const loadedTiny = async () =>
  ((await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/status' }))).json() as ServerStatus).loaded.find((model) => model.id === 'tiny');

describe('models.overrides in the configuration', () => {
  it('is saved to config.yaml through apply and refuses values the models section would refuse, in words', async () => {
    await apply({ models: { overrides: { tiny: { context_size: 1024, threads: 1, parallel: 2, gpu_layers: 0 } } } });
    expect((parse(readFileSync(hearth.services.paths.config, 'utf8')) as ConfigDocument).models.overrides).toEqual({
      tiny: { context_size: 1024, threads: 1, parallel: 2, gpu_layers: 0 },
    });
    const bad = await post('/admin/config/plan', {
      document: { version: 1, models: { overrides: { tiny: { context_size: 100, gpu_layers: 'all', threads: 0, parallel: 'many', batch: 2 } } } },
    });
    expect(bad.statusCode).toBe(400);
    const problems = (bad.json() as { error: { problems: { path: string; message: string }[] } }).error.problems;
    expect(problems).toEqual(
      expect.arrayContaining([
        { path: 'models.overrides.tiny.context_size', message: 'must be a whole number from 256 to 1048576' },
        { path: 'models.overrides.tiny.gpu_layers', message: 'must be "auto" or a whole number from 0 to 1024' },
        { path: 'models.overrides.tiny.threads', message: 'must be "auto" or a whole number from 1 to 256' },
        { path: 'models.overrides.tiny.parallel', message: 'must be "auto" or a whole number from 1 to 64' },
        expect.objectContaining({ path: 'models.overrides.tiny.batch' }),
      ]),
    );
  });

  it('refuses a provider model and warns about a model that is not installed', async () => {
    const provider = await post('/admin/config/plan', { document: { version: 1, models: { overrides: { 'openai/gpt-4o': { context_size: 1024 } } } } });
    expect(provider.statusCode).toBe(400);
    expect(provider.body).toContain('provider model');
    const planned = await plan({ models: { overrides: { tinny: { context_size: 1024 } } } });
    expect(planned.warnings).toEqual([expect.stringMatching(/^models\.overrides\.tinny: .*"tinny", which is not installed/)]);
  });

  it('merges one setting at a time, and a null removes one (back to the default)', async () => {
    await apply({ models: { overrides: { tiny: { context_size: 1024, threads: 1 } } } });
    await apply({ models: { overrides: { tiny: { parallel: 3 } } } });
    expect(hearth.services.config.models.overrides).toEqual({ tiny: { context_size: 1024, threads: 1, parallel: 3 } });
    const applied = await apply({ models: { overrides: { tiny: { context_size: null, threads: null } } } });
    expect(applied.changes).toEqual([
      { section: 'models', target: 'models', action: 'update', fields: ['overrides.tiny.context_size', 'overrides.tiny.threads'] },
    ]);
    expect(hearth.services.config.models.overrides).toEqual({ tiny: { parallel: 3 } });
    await apply({ models: { overrides: { tiny: null } } });
    expect(hearth.services.config.models.overrides).toEqual({});
    expect((parse(readFileSync(hearth.services.paths.config, 'utf8')) as ConfigDocument).models.overrides ?? {}).toEqual({});
    // A null where a section is expected is still a problem, not a way to wipe it.
    expect((await post('/admin/config/plan', { document: { version: 1, models: null } })).statusCode).toBe(400);
  });
});

describe('the engine', () => {
  it("loads a model with its own context size, threads and sequences, and only that model's", async () => {
    await apply({ models: { overrides: { tiny: { context_size: 1024, threads: 1, parallel: 3 } } } });
    await post('/admin/models/tiny/load');
    expect(await loadedTiny()).toMatchObject({ context_size: 1024, threads: 1, sequences: 3 });
    // The window a request may use follows it too.
    const listed = (await hearth.app.inject({ method: 'GET', url: '/v1/models/tiny' })).json() as { context_window: number };
    expect(listed.context_window).toBe(1024);
    // Another model's entry changes nothing for this one.
    await hearth.services.engine.unload('tiny');
    await apply({ models: { overrides: { tiny: null, other: { context_size: 512 } } } });
    await post('/admin/models/tiny/load');
    expect((await loadedTiny())!.context_size).toBe(2048);
  });

  it('keeps a loaded model on its settings until it is loaded again, and the plan says so', async () => {
    await post('/admin/models/tiny/load');
    expect((await loadedTiny())!.context_size).toBe(2048);
    const planned = await plan({ models: { overrides: { tiny: { context_size: 512 } } } });
    expect(planned.reload_required).toEqual(['tiny']);
    expect(planned.restart_required).toEqual([]);
    // The section's defaults count too; a model that is not loaded needs no reload.
    expect((await plan({ models: { context_size: 1024 } })).reload_required).toEqual(['tiny']);
    expect((await plan({ models: { overrides: { other: { context_size: 512 } } } })).reload_required).toEqual([]);
    const applied = await apply({ models: { overrides: { tiny: { context_size: 512 } } } });
    expect(applied.reload_required).toEqual(['tiny']);
    expect((await loadedTiny())!.context_size).toBe(2048);
    await post('/admin/models/tiny/unload');
    await post('/admin/models/tiny/load');
    expect((await loadedTiny())!.context_size).toBe(512);
    // Which GPU backend is used is chosen once per process.
    expect((await plan({ models: { gpu: 'cpu' } })).restart_required).toEqual(['models.gpu']);
  });
});

describe('POST /admin/models/{id}/estimate', () => {
  it('estimates the saved settings, and what the settings asked would take instead', async () => {
    await apply({ models: { overrides: { tiny: { context_size: 1024, parallel: 2 } } } });
    const saved = await estimate();
    expect(saved).toMatchObject({
      id: 'tiny',
      settings: { context_size: 1024, parallel: 2, threads: 'auto', gpu_layers: 'auto' },
      saved: { context_size: 1024, parallel: 2 },
      defaults: { context_size: 4096, parallel: 'auto', threads: 'auto', gpu_layers: 'auto' },
      trained_context: 2048,
      context_size: 1024,
      parallel: 2,
      gpu: false,
      gpu_layers: 0,
      gpu_bytes: 0,
      loaded: false,
      budget_bytes: hearth.services.engine.memoryBudgetBytes,
      fits: 'yes',
    });
    const file = (await hearth.services.catalog.local()).find((model) => model.id === 'tiny')!;
    expect(saved.weights_bytes).toBeGreaterThan(file.sizeBytes);
    expect(saved.context_bytes).toBeGreaterThan(0);
    expect(saved.memory_bytes).toBe(saved.weights_bytes + saved.context_bytes);
    expect(saved.budget_share_bytes).toBe(saved.memory_bytes);

    // Twice the context, twice the sequences: more memory for the contexts, the same weights.
    const larger = await estimate({ context_size: 2048, parallel: 4 });
    expect(larger.settings).toMatchObject({ context_size: 2048, parallel: 4 });
    expect(larger.weights_bytes).toBe(saved.weights_bytes);
    expect(larger.context_bytes).toBeGreaterThan(saved.context_bytes * 3);
    // Capped at the trained context, as the engine does.
    expect((await estimate({ context_size: 8192, parallel: 4 })).context_size).toBe(2048);
    // Nothing was saved or loaded.
    expect(hearth.services.config.models.overrides).toEqual({ tiny: { context_size: 1024, parallel: 2 } });
    expect(await loadedTiny()).toBeUndefined();
  });

  it('matches what the engine then loads', async () => {
    const planned = await estimate({ context_size: 1024, parallel: 'auto', threads: 1 });
    await apply({ models: { overrides: { tiny: { context_size: 1024, parallel: 'auto', threads: 1 } } } });
    await post('/admin/models/tiny/load');
    const loaded = (await loadedTiny())!;
    expect(loaded).toMatchObject({ context_size: planned.context_size, sequences: planned.parallel });
    expect((await estimate()).loaded).toBe(true);
  });

  it('refuses what the configuration would refuse, unknown models and remote ones', async () => {
    const bad = await post('/admin/models/tiny/estimate', { context_size: 10 });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ error: { type: 'invalid_request_error', param: 'context_size' } });
    expect((await post('/admin/models/tiny/estimate', { batch: 4 })).statusCode).toBe(400);
    const unknown = await post('/admin/models/nope/estimate', {});
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ error: { code: 'model_not_found' } });
    // Only the machine's owner may ask (an admin route).
    const outsider = await hearth.app.inject({ method: 'POST', url: '/admin/models/tiny/estimate', payload: {}, headers: { authorization: 'Bearer nope' } });
    expect(outsider.statusCode).toBe(401);
  });
});
