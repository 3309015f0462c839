/**
 * The model library routes against a local hub that speaks the Hugging Face API: search,
 * a repository's GGUF files with their fit, downloads with progress, pause, resume, cancel,
 * persistence across a restart, offline failures, and removing a downloaded model.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DownloadList, HubRepoFiles, HubSearchResponse, ModelDownload } from '#shared/api/model-library.js';
import type { ModelList } from '#shared/api/openai.js';
import { registerAdminServer } from '../../helpers/admin-fetch.js';
import { asOwner, testApp } from '../../helpers/app.js';
import { chatMetadata, ggufArrayBomb, ggufFile } from '../../helpers/gguf-header.js';
import { closedPort } from '../../helpers/mock-provider.js';
import { tinyModelPath, tinyVisionModelPaths } from '../../helpers/models.js';
import { newDataDir } from '../../helpers/server.js';
import { until as untilValue } from '../../helpers/until.js';
import { startHubFixture, type HubFixture } from '../../fixtures/hub/server.js';

let hub: HubFixture;
let tiny: Buffer;
/** The tiny vision model and its projector, served as a repository with two projectors to choose from. */
let vision: { model: Buffer; projector: Buffer };
const MB = 1024 * 1024;

beforeAll(async () => {
  tiny = await readFile(await tinyModelPath());
  const paths = await tinyVisionModelPaths();
  vision = { model: await readFile(paths.model), projector: await readFile(paths.projector) };
  hub = await startHubFixture([
    {
      id: 'hearth-test/Tiny-Chat-GGUF',
      downloads: 5000,
      likes: 12,
      files: {
        'tiny-chat-Q4_K_M.gguf': tiny,
        'tiny-chat-Q8_0.gguf': ggufFile(chatMetadata(), 10 * MB, 1),
        'big/tiny-chat-F32-00001-of-00002.gguf': ggufFile(chatMetadata(), 20 * MB, 2),
        'big/tiny-chat-F32-00002-of-00002.gguf': ggufFile({ 'split.no': 1, 'split.count': 2 }, 20 * MB, 3),
        'README.md': Buffer.from('# Tiny chat'),
      },
    },
    {
      id: 'hearth-test/Seeing-Model',
      downloads: 700,
      likes: 3,
      files: {
        'tiny-vision-Q4_K_M.gguf': vision.model,
        // Two projectors: the F16 one is chosen, though the other is smaller.
        'mmproj-F16.gguf': vision.projector,
        'mmproj-Q8_0.gguf': ggufFile({ 'general.architecture': 'clip' }, 1000, 4),
      },
    },
    { id: 'someone/Other-GGUF', downloads: 90_000, likes: 300, trendingScore: 1, files: { 'other.Q2_K.gguf': ggufFile(chatMetadata(), 2000, 5) } },
    { id: 'someone/not-a-gguf', downloads: 1_000_000, likes: 1, tags: ['safetensors'], files: { 'model.safetensors': Buffer.alloc(10) } },
  ]);
  process.env.HF_ENDPOINT = hub.url;
});

afterAll(async () => {
  await hub?.close();
});

/** A companion whose memory budget is 100 MiB, so that fits are easy to reason about. */
async function app(dataDir?: string) {
  const dir = dataDir ?? (await newDataDir(false));
  writeFileSync(join(dir, 'config.yaml'), 'version: 1\nmodels:\n  external_sources: false\n  threads: 1\n  context_size: 512\n  memory_budget_mb: 100\n');
  return { dir, ...(await testApp({ dataDir: dir })) };
}

type App = Awaited<ReturnType<typeof app>>;

async function call<T>(target: App, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown): Promise<{ status: number; body: T }> {
  const request = { method, url, remoteAddress: '127.0.0.1', ...(payload === undefined ? {} : { payload: payload as object }) };
  // The admin routes as the machine's owner; the inference routes (/v1/models) as any local client.
  const response = await target.app.inject(url.startsWith('/admin/') ? asOwner(request) : request);
  return { status: response.statusCode, body: response.json() as T };
}

async function until(target: App, id: string, statuses: ModelDownload['status'][]): Promise<ModelDownload> {
  return untilValue(
    async () => {
      const { body } = await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${id}`);
      return statuses.includes(body.status) ? body : undefined;
    },
    `download ${id} to be ${statuses.join(' or ')}`,
  );
}

describe('searching the hub', () => {
  it('asks for GGUF repositories sorted by downloads and answers id, downloads, likes, updated_at', async () => {
    const target = await app();
    try {
      const { status, body } = await call<HubSearchResponse>(target, 'GET', '/admin/models/search?q=gguf&limit=5');
      expect(status).toBe(200);
      expect(body.data).toEqual([
        { id: 'someone/Other-GGUF', downloads: 90_000, likes: 300, updated_at: '2026-10-01T00:00:00.000Z' },
        { id: 'hearth-test/Tiny-Chat-GGUF', downloads: 5000, likes: 12, updated_at: '2026-10-01T00:00:00.000Z' },
      ]);
      expect(hub.requests.at(-1)).toBe('/api/models?search=gguf&filter=gguf&sort=downloads&direction=-1&limit=5');
      const trending = await call<HubSearchResponse>(target, 'GET', '/admin/models/search?q=tiny&sort=trending');
      expect(trending.body.data.map((model) => model.id)).toEqual(['hearth-test/Tiny-Chat-GGUF']);
      expect(hub.requests.at(-1)).toContain('sort=trendingScore');
      const bad = await call<{ error: { param: string } }>(target, 'GET', '/admin/models/search?limit=many');
      expect(bad.status).toBe(400);
    } finally {
      await target.close();
    }
  });

  it("lists a repository's GGUF models with size, quantization and fit against the memory budget", async () => {
    const target = await app();
    try {
      const { status, body } = await call<HubRepoFiles>(target, 'GET', '/admin/models/search/hearth-test/Tiny-Chat-GGUF');
      expect(status).toBe(200);
      expect(body.memory_budget_bytes).toBe(100 * MB);
      expect(body.data).toEqual([
        {
          name: 'tiny-chat-Q4_K_M.gguf',
          size_bytes: tiny.length,
          quantization: 'Q4_K_M',
          fits: 'yes',
          parts: 1,
          source: 'hearth-test/Tiny-Chat-GGUF/tiny-chat-Q4_K_M.gguf',
          projector: null,
        },
        {
          name: 'tiny-chat-Q8_0.gguf',
          size_bytes: 10 * MB,
          quantization: 'Q8_0',
          fits: 'tight',
          parts: 1,
          source: 'hearth-test/Tiny-Chat-GGUF/tiny-chat-Q8_0.gguf',
          projector: null,
        },
        {
          name: 'big/tiny-chat-F32-00001-of-00002.gguf',
          size_bytes: 40 * MB,
          quantization: 'F32',
          fits: 'no',
          parts: 2,
          source: 'hearth-test/Tiny-Chat-GGUF/big/tiny-chat-F32-00001-of-00002.gguf',
          projector: null,
        },
      ]);
      // A repository with projectors: one comes with the model, and counts in its size.
      const withProjector = await call<HubRepoFiles>(target, 'GET', '/admin/models/search/hearth-test/Seeing-Model');
      expect(withProjector.body.data).toEqual([
        {
          name: 'tiny-vision-Q4_K_M.gguf',
          size_bytes: vision.model.length + vision.projector.length,
          quantization: 'Q4_K_M',
          fits: 'yes',
          parts: 1,
          source: 'hearth-test/Seeing-Model/tiny-vision-Q4_K_M.gguf',
          projector: { name: 'mmproj-F16.gguf', size_bytes: vision.projector.length },
        },
      ]);
      const missing = await call<{ error: { code: string } }>(target, 'GET', '/admin/models/search/nobody/nothing');
      expect([missing.status, missing.body.error.code]).toEqual([404, 'model_not_found']);
    } finally {
      await target.close();
    }
  });
});

describe('downloads', () => {
  it('streams progress, then the model is listed by /v1/models and answers a chat without a restart', async () => {
    const target = await app();
    hub.throttle(256 * 1024);
    try {
      const created = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source: 'hearth-test/Tiny-Chat-GGUF' });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ source: 'hearth-test/Tiny-Chat-GGUF', bytes_done: 0, model_id: null });
      expect(created.body.id).toMatch(/^dl_/);
      await target.app.listen({ port: 0, host: '127.0.0.1' });
      const address = target.app.server.address() as { port: number };
      registerAdminServer(`http://127.0.0.1:${address.port}`, target.dir);
      const response = await fetch(`http://127.0.0.1:${address.port}/admin/models/downloads/${created.body.id}/events`);
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const events = (await response.text())
        .split('\n\n')
        .filter((block) => block.startsWith('data: '))
        .map((block) => JSON.parse(block.slice(6)) as ModelDownload);
      const done = events.at(-1)!;
      expect(done).toMatchObject({
        status: 'completed',
        bytes_done: tiny.length,
        bytes_total: tiny.length,
        file: 'tiny-chat-Q4_K_M.gguf',
        model_id: 'tiny-chat-q4_k_m',
      });
      const partway = events.filter((event) => event.status === 'downloading' && event.bytes_done > 0 && event.bytes_done < tiny.length);
      expect(partway.length).toBeGreaterThan(0);
      expect(partway.every((event) => event.bytes_total === tiny.length)).toBe(true);
      expect(partway.some((event) => (event.bytes_per_second ?? 0) > 0)).toBe(true);
      expect(readFileSync(join(target.dir, 'models', 'tiny-chat-Q4_K_M.gguf')).equals(tiny)).toBe(true);

      const models = await call<ModelList>(target, 'GET', '/v1/models');
      expect(models.body.data.map((model) => model.id)).toContain('tiny-chat-q4_k_m');
      const chat = await call<{ choices: { message: { content: string } }[] }>(target, 'POST', '/v1/chat/completions', {
        model: 'tiny-chat-q4_k_m',
        messages: [{ role: 'user', content: 'Hello' }],
        max_tokens: 4,
      });
      expect(chat.status).toBe(200);
      expect(chat.body.choices[0]!.message.content.length).toBeGreaterThan(0);

      // Removing it deletes the file and takes it off the list.
      const removed = await call<{ files: string[] }>(target, 'DELETE', '/admin/models/tiny-chat-q4_k_m');
      expect(removed).toEqual({ status: 200, body: { id: 'tiny-chat-q4_k_m', deleted: true, files: ['tiny-chat-Q4_K_M.gguf'] } });
      expect(existsSync(join(target.dir, 'models', 'tiny-chat-Q4_K_M.gguf'))).toBe(false);
      expect((await call<ModelList>(target, 'GET', '/v1/models')).body.data.map((model) => model.id)).not.toContain('tiny-chat-q4_k_m');
    } finally {
      hub.throttle(0);
      await target.close();
    }
  });

  it('pauses with the partial file kept, resumes from it, and cancels with the partial file removed', async () => {
    const target = await app();
    hub.hold();
    try {
      const source = 'hearth-test/Tiny-Chat-GGUF/tiny-chat-Q8_0.gguf';
      const partial = join(target.dir, 'models', 'tiny-chat-Q8_0.gguf.partial');
      const { body: created } = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source });
      await expect.poll(async () => (await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${created.id}`)).body.bytes_done).toBeGreaterThan(0);
      const paused = await call<ModelDownload>(target, 'POST', `/admin/models/downloads/${created.id}/pause`);
      expect(paused.status).toBe(200);
      const stopped = await until(target, created.id, ['paused']);
      expect(stopped.bytes_done).toBeLessThan(10 * MB);
      expect(existsSync(partial)).toBe(true);
      const again = await call<{ error: { code: string } }>(target, 'POST', `/admin/models/downloads/${created.id}/pause`);
      expect([again.status, again.body.error.code]).toEqual([409, 'download_conflict']);

      const before = hub.requests.length;
      hub.release();
      await call(target, 'POST', `/admin/models/downloads/${created.id}/resume`);
      const completed = await until(target, created.id, ['completed', 'failed']);
      expect(completed).toMatchObject({ status: 'completed', bytes_done: 10 * MB, model_id: 'tiny-chat-q8_0' });
      // The resume asked only for what was missing.
      expect(hub.requests.slice(before).some((path) => path.startsWith('/store/'))).toBe(true);
      expect(existsSync(partial)).toBe(false);

      // Cancel: a second download of another file, stopped part-way.
      hub.hold();
      const { body: second } = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source: 'hearth-test/Tiny-Chat-GGUF:F32' });
      await expect.poll(async () => (await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${second.id}`)).body.bytes_done).toBeGreaterThan(0);
      const cancelled = await call<ModelDownload>(target, 'DELETE', `/admin/models/downloads/${second.id}`);
      expect(cancelled.body.status).toBe('cancelled');
      expect(existsSync(join(target.dir, 'models', 'tiny-chat-F32-00001-of-00002.gguf.partial'))).toBe(false);
      // A finished or cancelled download is forgotten by a second DELETE.
      expect((await call(target, 'DELETE', `/admin/models/downloads/${second.id}`)).status).toBe(200);
      expect((await call(target, 'GET', `/admin/models/downloads/${second.id}`)).status).toBe(404);
      const list = await call<DownloadList>(target, 'GET', '/admin/models/downloads');
      expect(list.body.data.map((download) => [download.id, download.status])).toEqual([[created.id, 'completed']]);
    } finally {
      hub.release();
      await target.close();
    }
  });

  it("downloads a repository's projector with the model into one folder: one progress, pause, resume and cancel for both", async () => {
    const target = await app();
    const models = join(target.dir, 'models');
    const source = 'hearth-test/Seeing-Model';
    const total = vision.model.length + vision.projector.length;
    const partials = () => (existsSync(models) ? readdirSync(models).filter((name) => name.endsWith('.partial')) : []);
    hub.hold();
    try {
      // Cancel part-way: no partial file of either is left.
      const { body: cancelled } = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source });
      await expect.poll(async () => (await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${cancelled.id}`)).body.bytes_done).toBeGreaterThan(0);
      expect((await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${cancelled.id}`)).body.bytes_total).toBe(total);
      expect(partials().length).toBeGreaterThan(0);
      expect((await call<ModelDownload>(target, 'DELETE', `/admin/models/downloads/${cancelled.id}`)).body.status).toBe('cancelled');
      expect(partials()).toEqual([]);

      // Pause part-way, then resume: both files arrive, counted together.
      const { body: created } = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source });
      await expect.poll(async () => (await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${created.id}`)).body.bytes_done).toBeGreaterThan(0);
      await call(target, 'POST', `/admin/models/downloads/${created.id}/pause`);
      const paused = await until(target, created.id, ['paused']);
      expect(paused.bytes_done).toBeLessThan(total);
      expect(partials().length).toBe(1);
      hub.release();
      await call(target, 'POST', `/admin/models/downloads/${created.id}/resume`);
      const completed = await until(target, created.id, ['completed', 'failed']);
      expect(completed).toMatchObject({
        status: 'completed',
        bytes_done: total,
        bytes_total: total,
        file: 'tiny-vision-Q4_K_M.gguf',
        model_id: 'tiny-vision-q4_k_m',
      });
      // The F16 projector, renamed after the repository so that two repositories' `mmproj-F16.gguf` do not collide.
      expect(readdirSync(models).sort()).toEqual(['mmproj-Seeing-Model-F16.gguf', 'tiny-vision-Q4_K_M.gguf']);
      expect(readFileSync(join(models, 'tiny-vision-Q4_K_M.gguf')).equals(vision.model)).toBe(true);
      expect(readFileSync(join(models, 'mmproj-Seeing-Model-F16.gguf')).equals(vision.projector)).toBe(true);
      const listed = (await call<ModelList>(target, 'GET', '/v1/models')).body.data.find((model) => model.id === 'tiny-vision-q4_k_m');
      expect(listed?.capabilities).toContain('vision');

      // Files already there are not fetched again.
      const before = hub.requests.length;
      const { body: again } = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source: `${source}/tiny-vision-Q4_K_M.gguf` });
      expect(await until(target, again.id, ['completed', 'failed'])).toMatchObject({ status: 'completed', bytes_done: total });
      expect(hub.requests.slice(before).filter((path) => path.startsWith('/store/') || path.includes('/resolve/'))).toEqual([]);
    } finally {
      hub.release();
      await target.close();
    }
  });

  it('keeps downloads across a restart and resumes the one that was running', async () => {
    hub.hold();
    const first = await app();
    const { body: created } = await call<ModelDownload>(first, 'POST', '/admin/models/downloads', { source: 'hearth-test/Tiny-Chat-GGUF:Q8_0' });
    await expect.poll(async () => (await call<ModelDownload>(first, 'GET', `/admin/models/downloads/${created.id}`)).body.bytes_done).toBeGreaterThan(0);
    await first.close();
    hub.release();
    const second = await app(first.dir);
    try {
      const completed = await until(second, created.id, ['completed', 'failed']);
      expect(completed).toMatchObject({ status: 'completed', bytes_done: 10 * MB, model_id: 'tiny-chat-q8_0' });
    } finally {
      hub.release();
      await second.close();
    }
  });

  it('refuses a file whose GGUF header cannot be read safely: the download fails with the reason and nothing is kept', async () => {
    hub.add({ id: 'attacker/Crafted', downloads: 1, likes: 0, files: { 'crafted-Q4_K_M.gguf': ggufArrayBomb() } });
    const target = await app();
    try {
      const { body: created } = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source: 'attacker/Crafted' });
      const status = async () => (await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${created.id}`)).body.status;
      await expect.poll(status).toBe('failed');
      const failed = await call<ModelDownload>(target, 'GET', `/admin/models/downloads/${created.id}`);
      expect(failed.body).toMatchObject({ file: 'crafted-Q4_K_M.gguf', model_id: null });
      expect(failed.body.error).toBe(
        'attacker/Crafted/crafted-Q4_K_M.gguf is not a usable GGUF model file (it says it has 1099511627776 elements in "a"; Hearth reads at most 16777216); ' +
          'Hearth deleted it instead of adding it to the models folder.',
      );
      expect(readdirSync(join(target.dir, 'models'))).toEqual([]);
      const models = await call<ModelList>(target, 'GET', '/v1/models');
      expect(models.body.data.map((model) => model.id)).not.toContain('crafted-q4_k_m');
    } finally {
      await target.close();
    }
  });

  it('refuses bad input with the error table', async () => {
    const target = await app();
    try {
      const bad = await call<{ error: { code: string; param: string } }>(target, 'POST', '/admin/models/downloads', { source: 'no spec here' });
      expect([bad.status, bad.body.error.code, bad.body.error.param]).toEqual([400, 'invalid_request_error', 'spec']);
      expect((await call(target, 'POST', '/admin/models/downloads', { source: 3 })).status).toBe(400);
      const unknown = await call<{ error: { code: string } }>(target, 'POST', '/admin/models/downloads/dl_nothing/resume');
      expect([unknown.status, unknown.body.error.code]).toEqual([404, 'download_not_found']);
      // Without the local admin credential, or not from loopback: refused like every admin route.
      expect((await target.app.inject({ method: 'GET', url: '/admin/models/downloads', remoteAddress: '127.0.0.1' })).statusCode).toBe(401);
      expect((await target.app.inject({ method: 'GET', url: '/admin/events', remoteAddress: '127.0.0.1' })).statusCode).toBe(401);
      const remote = await target.app.inject(asOwner({ method: 'GET', url: '/admin/models/downloads', remoteAddress: '192.168.1.9' }));
      expect(remote.statusCode).toBe(403);
    } finally {
      await target.close();
    }
  });
});

describe('offline', () => {
  it('says at once that the hub cannot be reached, for search and for downloads', async () => {
    const target = await app();
    const port = await closedPort();
    process.env.HF_ENDPOINT = `http://127.0.0.1:${port}`;
    try {
      const search = await call<{ error: { code: string; message: string } }>(target, 'GET', '/admin/models/search?q=qwen');
      expect(search.status).toBe(502);
      expect(search.body.error.code).toBe('provider_unreachable');
      expect(search.body.error.message).toMatch(
        new RegExp(`^Hugging Face \\(127\\.0\\.0\\.1:${port}\\) cannot be reached: connection refused\\. .*models on this machine keep working`),
      );
      const { body } = await call<ModelDownload>(target, 'POST', '/admin/models/downloads', { source: 'owner/repo' });
      const failed = await until(target, body.id, ['failed']);
      expect(failed.error).toContain(`cannot reach 127.0.0.1:${port} (connection refused)`);
    } finally {
      process.env.HF_ENDPOINT = hub.url;
      await target.close();
    }
  });
});
