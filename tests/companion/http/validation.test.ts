/**
 * Request schemas are compiled at each route's first request (http/validation.ts), so a schema
 * Ajv refuses or warns about would not show when Hearth starts. Here every route's schemas are
 * compiled at start-up instead, and the answers to bad bodies are the same either way.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { testApp, type TestApp } from '../../helpers/app.js';

const apps: TestApp[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

async function started(schemasAtStart: boolean): Promise<TestApp> {
  const app = await testApp({ withModel: false, schemasAtStart });
  apps.push(app);
  await app.app.ready();
  return app;
}

/** Bodies that break a schema in different ways (a type, a bound, an unknown field, a missing one). */
const BAD = [
  { url: '/v1/chat/completions', payload: { model: 'tiny', messages: [{ role: 'user', content: 'hi' }], max_tokens: '5' } },
  { url: '/v1/chat/completions', payload: { model: 'tiny', messages: [{ role: 'user', content: 'hi' }], n: 9 } },
  { url: '/v1/embeddings', payload: { model: 'tiny' } },
  { url: '/v1/messages', payload: { model: 'tiny', max_tokens: -1, messages: [{ role: 'user', content: 'hi' }] } },
  { url: '/api/chat', payload: { model: 'tiny', messages: 'hi' } },
];

describe('request schemas', () => {
  it('all compile, without a warning, when compiled as the listener starts', async () => {
    const warn = vi.spyOn(console, 'warn');
    const log = vi.spyOn(console, 'log');
    try {
      await started(true);
      expect(warn).not.toHaveBeenCalled();
      expect(log).not.toHaveBeenCalled();
    } finally {
      warn.mockRestore();
      log.mockRestore();
    }
  });

  it('answer a bad body the same way compiled at the first request as compiled at start-up', async () => {
    const [lazy, eager] = [await started(false), await started(true)];
    for (const request of BAD) {
      const [first, again, atStart] = [
        await lazy.app.inject({ method: 'POST', ...request }),
        await lazy.app.inject({ method: 'POST', ...request }),
        await eager.app.inject({ method: 'POST', ...request }),
      ];
      expect(first.statusCode, `${request.url} ${first.body}`).toBe(400);
      expect(first.json()).toEqual(atStart.json());
      expect(again.json()).toEqual(atStart.json());
    }
  });
});
