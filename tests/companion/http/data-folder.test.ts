import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOllamaApp } from '../../../companion/src/ollama-app.js';
import { asOwner, testApp, type TestApp } from '../../helpers/app.js';
import { tempFolder } from '../../helpers/temp.js';

/*
 * While the data folder is gone, changes are refused in the shape of each route's protocol;
 * reads, the app's sign-in and a restart still go through. The folder back: nothing is refused.
 */

let test: TestApp;
const aside = join(tempFolder('aside'), 'moved');

beforeAll(async () => {
  test = await testApp({ withModel: false });
  renameSync(test.services.paths.root, aside);
  await test.services.dataFolder.check();
});

afterAll(async () => {
  await test?.close();
});

const chat = { model: 'absent', messages: [{ role: 'user', content: 'Hi' }] };

describe('the data folder gone', () => {
  it('is noticed, and /health answers 503 with the error', async () => {
    expect(test.services.dataFolder.gone).toBe(true);
    const health = await test.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(503);
    expect(health.json()).toMatchObject({ status: 'error', error: { code: 'data_folder_gone' } });
  });

  it("refuses changes in each protocol's error shape", async () => {
    const openai = await test.app.inject({ method: 'POST', url: '/v1/chat/completions', payload: chat });
    expect(openai.statusCode).toBe(503);
    expect(openai.json()).toMatchObject({ error: { code: 'data_folder_gone', type: 'server_error' } });

    const anthropic = await test.app.inject({ method: 'POST', url: '/v1/messages', payload: { ...chat, max_tokens: 5 } });
    expect(anthropic.statusCode).toBe(503);
    expect(anthropic.json()).toMatchObject({ type: 'error', error: { message: expect.stringMatching(/deleted or moved/) } });

    const ollama = await test.app.inject({ method: 'POST', url: '/api/chat', payload: chat });
    expect(ollama.statusCode).toBe(503);
    expect(ollama.json()).toEqual({ error: expect.stringMatching(/deleted or moved/) });

    const key = await test.app.inject(asOwner({ method: 'POST', url: '/admin/keys', payload: { label: 'x' } }));
    expect(key.statusCode).toBe(503);
    expect(key.json()).toMatchObject({ error: { code: 'data_folder_gone' } });
  });

  it("refuses them on Ollama's own listener too", async () => {
    const ollamaApp = await buildOllamaApp({ services: test.services });
    try {
      const refused = await ollamaApp.inject({ method: 'POST', url: '/api/chat', payload: chat });
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toEqual({ error: expect.stringMatching(/deleted or moved/) });
    } finally {
      await ollamaApp.close();
    }
  });

  it('still answers reads and signs the app in', async () => {
    expect((await test.app.inject({ method: 'GET', url: '/v1/models' })).statusCode).toBe(200);
    const link = await test.app.inject(asOwner({ method: 'POST', url: '/admin/session/links' }));
    expect(link.statusCode).toBe(200);
  });

  it('back in its place: nothing is refused', async () => {
    renameSync(aside, test.services.paths.root);
    await test.services.dataFolder.check();
    expect(test.services.dataFolder.gone).toBe(false);
    expect((await test.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
    const openai = await test.app.inject({ method: 'POST', url: '/v1/chat/completions', payload: chat });
    expect(openai.json()).toMatchObject({ error: { code: 'model_not_found' } });
  });
});
