import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useInvocation } from '../../../companion/src/invocation.js';
import { closestModel, unknownModelAdvice } from '../../../companion/src/models/suggest.js';
import { asOwner, testApp, type TestApp } from '../../helpers/app.js';
import { tinyModelPath } from '../../helpers/models.js';

/*
 * Errors that say what to do next (one test each): the message names the fix, not only the fault.
 */

let test: TestApp;

beforeAll(async () => {
  useInvocation({ command: 'npm run hearth --', start: 'npm start', folder: '/home/me/hearth' });
  test = await testApp({ withModel: true });
  copyFileSync(await tinyModelPath(), join(test.services.paths.models, 'small-chat.gguf'));
});

afterAll(async () => {
  await test?.close();
});

const chat = (model: string) =>
  test.app.inject({ method: 'POST', url: '/v1/chat/completions', payload: { model, max_tokens: 1, messages: [{ role: 'user', content: 'Hi' }] } });

const message = (response: { json(): unknown }) => (response.json() as { error: { message: string } }).error.message;

describe('an unknown model', () => {
  it('lists the ids there are and suggests the same name in another case (Tiny → tiny)', async () => {
    const response = await chat('Tiny');
    expect(response.statusCode).toBe(404);
    expect(message(response)).toBe('The model "Tiny" does not exist here. Did you mean "tiny"? Models here: small-chat, tiny.');
  });

  it('hints <provider>/<model> for a provider-style name', async () => {
    const response = await chat('openai/gpt-4o-mini');
    expect(response.statusCode).toBe(404);
    expect(message(response)).toMatch(/An id with a slash names a provider's model as <provider>\/<model>, and no provider is configured/);
    expect(message(response)).toMatch(/Models → Discover/);
    // The CLI form is spelled the way it runs on this machine.
    expect(message(response)).toContain('npm run hearth -- pull openai/gpt-4o-mini');
  });

  it('suggests the provider prefix for a provider model named without it', () => {
    const known = { local: ['tiny'], providerModels: ['mock/mock-small'], providers: ['mock'] };
    expect(closestModel('mock-small', known)).toBe('mock/mock-small');
    expect(unknownModelAdvice('MOCK-SMALL', known)).toBe('Did you mean "mock/mock-small"? Models here: tiny, mock/mock-small.');
    expect(unknownModelAdvice('gpt-4o', known)).toBe(
      'Provider models are named <provider>/<model>, for example mock/gpt-4o. Models here: tiny, mock/mock-small.',
    );
    expect(unknownModelAdvice('other/x', known)).toMatch(/no provider is called "other" \(providers here: mock\)/);
  });

  it('says so when there are no models at all', () => {
    expect(unknownModelAdvice('tiny', { local: [], providerModels: [], providers: [] })).toBe('No models are installed yet.');
  });
});

describe('a wrong path', () => {
  it('/v1/v1/… says to remove the extra /v1', async () => {
    const response = await test.app.inject({ method: 'POST', url: '/v1/v1/chat/completions', payload: {} });
    expect(response.statusCode).toBe(404);
    expect(message(response)).toMatch(/Remove the extra \/v1: .* \(use \/v1\/chat\/completions\)\./);
  });

  it("a path under /api that Ollama's API does not have names the ones Hearth answers, in Ollama's shape", async () => {
    const response = await test.app.inject({ method: 'GET', url: '/api/nothing' });
    expect(response.statusCode).toBe(404);
    expect(response.headers['content-type']).toMatch(/json/);
    expect((response.json() as { error: string }).error).toMatch(/^No route for GET \/api\/nothing\. Hearth answers Ollama's \/api\/version, .*\/api\/chat/);
  });

  it('an OpenAI route without /v1 says to add it', async () => {
    const response = await test.app.inject({ method: 'POST', url: '/chat/completions', payload: {} });
    expect(message(response)).toMatch(/Add \/v1: .*\(use \/v1\/chat\/completions\)/);
  });
});

describe('the app not built yet', () => {
  it('the address says how to build it, in the Hearth folder', async () => {
    const response = await test.app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    expect(response.body).toMatch(
      /^Hearth is running, but the app is not built yet\. In the Hearth folder \(\/.+\), run npm run build \(npm start does it for you\)/,
    );
    expect(response.body).not.toContain('`');
  });
});

describe('a body over the limit', () => {
  it('413 names the limit and the setting that raises it', async () => {
    const limit = test.services.config.server.body_limit_mb;
    const response = await test.app.inject({
      method: 'POST',
      url: '/v1/chat/completions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'x'.repeat(limit * 1024 * 1024) }] }),
    });
    expect(response.statusCode).toBe(413);
    expect(message(response)).toBe(
      `The request body is larger than /v1/chat/completions accepts (at most ${limit} MB). To accept larger ones, raise server.body_limit_mb in config.yaml and restart Hearth.`,
    );
  });

  it('413 on a memory route names its own setting', async () => {
    const response = await test.app.inject({
      method: 'POST',
      url: '/memory/ingest',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ agent_id: 'a', conversation_id: 'c', turns: [{ user: 'x'.repeat(17 * 1024 * 1024), assistant: '' }] }),
    });
    expect(response.statusCode).toBe(413);
    expect(message(response)).toMatch(/at most 16 MB\)\. To accept larger ones, raise server\.limits\.memory_body_mb/);
  });
});

describe('a used sign-in link', () => {
  it('says how to get a new one, spelled as the command runs here', async () => {
    const response = await test.app.inject(
      asOwner({ method: 'POST', url: '/admin/session', headers: { authorization: '' }, payload: { code: 'used-or-made-up' } }),
    );
    expect(response.statusCode).toBe(401);
    expect(message(response)).toBe(
      'This sign-in link was already used or has expired. For a new one, run npm run hearth -- open on the machine Hearth runs on, or restart Hearth.',
    );
  });
});
