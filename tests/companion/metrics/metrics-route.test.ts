import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteScope } from '#shared/api/access.js';
import { RunStore } from '../../../companion/src/agents/store.js';
import { ImageJobStore } from '../../../companion/src/images/jobs/job-store.js';
import type { Services } from '../../../companion/src/services.js';
import { agentRun } from '../../helpers/agent-records.js';
import { parsePrometheus, sampleValue } from '../../helpers/prometheus.js';
import { asOwner, testApp, type TestApp } from '../../helpers/app.js';

/*
 * GET /metrics through the real app (inject, with forged socket peers and headers): the guard
 * (this machine without a key; anyone else with a key that has the metrics scope; a key that is
 * sent must have it) and what the text says after real requests to the tiny model.
 */

let built: TestApp;
let services: Services;

beforeAll(async () => {
  built = await testApp();
  services = built.services;
});

afterAll(async () => {
  await built?.close();
});

const key = (scopes?: RouteScope[]) => services.keys.create({ label: `metrics ${Math.random()}`, ...(scopes ? { scopes } : {}) }).key;
const scrape = (options: Partial<InjectOptions> = {}) => built.app.inject({ method: 'GET', url: '/metrics', ...options });

/** The samples of the gauge `name` for each of `states`, from a fresh scrape. */
async function byState(name: string, ...states: string[]): Promise<Record<string, number | undefined>> {
  const families = parsePrometheus((await scrape()).body);
  return Object.fromEntries(states.map((state) => [state, sampleValue(families, name, { state })]));
}

describe('the /metrics guard', () => {
  it('answers this machine without a key, in the Prometheus text format', async () => {
    const response = await scrape();
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(() => parsePrometheus(response.body)).not.toThrow();
  });

  it('refuses a key without the metrics scope (403), even from this machine; keys get it only when asked for', async () => {
    const plain = key();
    expect(services.keys.list().find((record) => plain.startsWith(record.prefix))!.scopes).not.toContain('metrics');
    for (const scopes of [undefined, ['inference', 'agents', 'tools', 'memory', 'images'] as RouteScope[]]) {
      const response = await scrape({ headers: { authorization: `Bearer ${key(scopes)}` } });
      expect(response.statusCode).toBe(403);
      expect(response.json().error).toMatchObject({ code: 'permission_denied', type: 'permission_error' });
      expect(response.json().error.message).toMatch(/--scope metrics/);
    }
  });

  it('refuses a request that came through a proxy (403) unless it carries a metrics key', async () => {
    for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip', 'via']) {
      const response = await scrape({ headers: { [header]: '203.0.113.9' } });
      expect(response.statusCode, header).toBe(403);
      expect(response.json().error.code).toBe('permission_denied');
      expect(response.json().error.message).toContain(header);
    }
    const metrics = key(['metrics']);
    expect((await scrape({ headers: { 'x-forwarded-for': '203.0.113.9', authorization: `Bearer ${metrics}` } })).statusCode).toBe(200);
  });

  it('refuses another machine without a key and lets a metrics key in; that key opens nothing else', async () => {
    expect((await scrape({ remoteAddress: '203.0.113.7' })).statusCode).toBe(403);
    const metrics = key(['metrics']);
    expect((await scrape({ remoteAddress: '203.0.113.7', headers: { authorization: `Bearer ${metrics}` } })).statusCode).toBe(200);
    const models = await built.app.inject({ method: 'GET', url: '/v1/models', headers: { authorization: `Bearer ${metrics}` } });
    expect(models.statusCode).toBe(403);
    expect((await scrape({ remoteAddress: '203.0.113.7', headers: { authorization: 'Bearer hth_not-a-real-key' } })).statusCode).toBe(401);
  });
});

describe('what /metrics reports', () => {
  it('counts requests and errors by family and model, tokens, first-token times, and the engine figures the admin status shows', async () => {
    const before = parsePrometheus((await scrape()).body);
    const chat = await built.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      payload: { model: 'tiny', stream: true, max_tokens: 6, messages: [{ role: 'user', content: 'Count this.' }] },
    });
    expect(chat.statusCode).toBe(200);
    const secret = 'a prompt the metrics must never show';
    const unknown = await built.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      payload: { model: `made-up ${secret}`, messages: [{ role: 'user', content: secret }] },
    });
    expect(unknown.statusCode).toBe(404);
    const text = (await scrape()).body;
    const after = parsePrometheus(text);
    const value = (families: typeof after, name: string, labels: Record<string, string>) => sampleValue(families, name, labels) ?? 0;
    expect(value(after, 'hearth_requests_total', { family: 'inference', model: 'tiny', status: '200' })).toBe(
      value(before, 'hearth_requests_total', { family: 'inference', model: 'tiny', status: '200' }) + 1,
    );
    // A model that does not exist is `other`: neither its name nor the prompt becomes a label.
    expect(value(after, 'hearth_request_errors_total', { family: 'inference', model: 'other', code: 'model_not_found' })).toBe(
      value(before, 'hearth_request_errors_total', { family: 'inference', model: 'other', code: 'model_not_found' }) + 1,
    );
    expect(text).not.toContain(secret);
    expect(text).not.toContain('made-up');
    expect(value(after, 'hearth_first_token_seconds_count', { model: 'tiny' })).toBe(value(before, 'hearth_first_token_seconds_count', { model: 'tiny' }) + 1);
    expect(value(after, 'hearth_prompt_tokens_total', { model: 'tiny' })).toBeGreaterThan(value(before, 'hearth_prompt_tokens_total', { model: 'tiny' }));
    expect(value(after, 'hearth_model_loads_total', { model: 'tiny', outcome: 'ready' })).toBe(1);
    for (const state of ['running', 'awaiting_approval', 'completed', 'failed', 'cancelled'])
      expect(sampleValue(after, 'hearth_agent_runs', { state })).toBe(0);
    expect(sampleValue(after, 'hearth_image_jobs', { state: 'completed' })).toBe(0);
    const status = (await built.app.inject(asOwner({ method: 'GET', url: '/admin/status' }))).json();
    const tiny = status.loaded.find((model: { id: string }) => model.id === 'tiny');
    expect(value(after, 'hearth_generated_tokens_total', { model: 'tiny' })).toBe(tiny.generated_tokens);
    expect(value(after, 'hearth_model_sequences', { model: 'tiny' })).toBe(tiny.sequences);
    expect(value(after, 'hearth_memory_budget_used_bytes', {})).toBe(tiny.memory_bytes);

    // Unloading is counted, and the loaded-model figures go away with the model.
    await built.app.inject(asOwner({ method: 'POST', url: '/admin/models/tiny/unload' }));
    const unloaded = parsePrometheus((await scrape()).body);
    expect(sampleValue(unloaded, 'hearth_model_unloads_total', { model: 'tiny' })).toBe(1);
    expect(sampleValue(unloaded, 'hearth_model_sequences', { model: 'tiny' })).toBeUndefined();
    expect(sampleValue(unloaded, 'hearth_memory_budget_used_bytes')).toBe(0);
  });

  it('counts agent runs by state as the store holds them at each scrape, however soon scrapes follow each other', async () => {
    const runs = new RunStore(services.db);
    const states = () => byState('hearth_agent_runs', 'running', 'completed');
    const before = await states();
    const run = agentRun(`run_metrics_${Date.now()}`, { agent_id: 'keeper', conversation_id: 'conv_metrics', created_at: Math.floor(Date.now() / 1000) });
    runs.insert(run);
    expect(await states()).toEqual({ running: before.running! + 1, completed: before.completed });
    runs.update({ ...run, status: 'completed', completed_at: run.created_at });
    expect(await states()).toEqual({ running: before.running, completed: before.completed! + 1 });
  });

  it('counts image jobs by state as they move', async () => {
    const jobs = new ImageJobStore(services.db);
    const states = () => byState('hearth_image_jobs', 'queued', 'generating');
    const before = await states();
    const id = `img_metrics_${Date.now()}`;
    jobs.create({ id, operation: 'generate', model: 'sd', steps: 4, prompt: 'a fox', negativePrompt: null, size: '64x64', seed: 1, owner: null });
    expect(await states()).toEqual({ queued: before.queued! + 1, generating: before.generating });
    jobs.stage(id, 'generating');
    expect(await states()).toEqual({ queued: before.queued, generating: before.generating! + 1 });
    const text = (await scrape()).body;
    expect(text).not.toContain('a fox');
  });
});
