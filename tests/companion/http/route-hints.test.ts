/**
 * A 404's hint names another path only where Hearth answers it: `POST /completions` said "use
 * /v1/completions" while /v1/completions was no route. Every hint here is followed and must
 * reach a route.
 */
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { ErrorBody } from '#shared/api/errors.js';
import { sharedApp } from '../../helpers/app.js';

const hearth = sharedApp({ withModel: false });

const message = (response: LightMyRequestResponse) => (response.json() as ErrorBody).error.message;

const send = (method: 'GET' | 'POST', url: string) => hearth.app.inject({ method, url, ...(method === 'POST' ? { payload: {} } : {}) });

/** Whether the path is a route for this method (its answer is anything but route_not_found). */
async function served(method: 'GET' | 'POST', url: string): Promise<boolean> {
  const response = await send(method, url);
  return response.statusCode !== 404 || (response.json() as ErrorBody).error.code !== 'route_not_found';
}

/** Mistakes and the path each one's hint names (/v1/completions only once that is served). */
const MISTAKES: ['GET' | 'POST', string, string | null][] = [
  ['POST', '/completions', '/v1/completions'],
  ['POST', '/chat/completions', '/v1/chat/completions'],
  ['POST', '/responses', '/v1/responses'],
  ['GET', '/models', '/v1/models'],
  ['POST', '/embeddings', '/v1/embeddings'],
  ['POST', '/images/generations', '/v1/images/generations'],
  ['POST', '/images/nonsense', null],
  ['GET', '/chat/completions', null],
  ['POST', '/v1/v1/completions', '/v1/completions'],
  ['POST', '/v1/v1/chat/completions', '/v1/chat/completions'],
];

describe('a 404 hint names only paths that are served', () => {
  it.each(MISTAKES)('%s %s', async (method, url, named) => {
    const response = await send(method, url);
    expect(response.statusCode).toBe(404);
    const hint = /\(use (\/\S+?)\)/.exec(message(response))?.[1] ?? null;
    expect(hint).toBe(named === '/v1/completions' && !(await served('POST', named)) ? null : named);
    expect(hint === null || (await served(method, hint)), `the hint for ${method} ${url} names ${hint}, which is served`).toBe(true);
  });

  it('POST /completions says what to use today, and /v1/completions once it is served', async () => {
    const said = message(await send('POST', '/completions'));
    expect(said).toMatch(
      (await served('POST', '/v1/completions'))
        ? /\(use \/v1\/completions\)/
        : /^No route for POST \/completions\. Hearth serves the OpenAI API under \/v1, but not POST \/v1\/completions: chat through POST \/v1\/chat\/completions\./,
    );
  });

  it('still says to add /v1 where that is the route', async () => {
    expect(message(await send('POST', '/chat/completions'))).toMatch(/Add \/v1: .*\(use \/v1\/chat\/completions\)/);
    expect(message(await send('GET', '/models'))).toMatch(/\(use \/v1\/models\)/);
  });
});
