import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { HTTPMethods } from 'fastify';
import { canonicalAppHost } from '../access/hosts.js';
import { errorBody } from '../errors.js';
import { installFolder } from '../invocation.js';
import { FRAME_DENIAL, policyForPage } from '../http/content-security.js';
import { familyOf } from '../http/perimeter.js';
import type { WebContext } from './contexts.js';
import type { RoutePlugin } from './plugin.js';

/** OpenAI's routes that some clients call without the /v1 prefix. */
const WITHOUT_V1 = /^\/(chat\/completions|completions|responses|models|embeddings|images\/[a-z]+)$/;

/**
 * Serves the built PWA at `/`. A page prerendered at build time (`/models` -> models.html) is
 * served as its HTML shell, so it paints before the JavaScript runs; other page paths get the
 * SPA fallback; anything else (API paths, missing files) gets the JSON 404 every route uses.
 */
export const webRoutes: RoutePlugin<WebContext> = async (app, { webRoot }) => {
  // One address for the app: a page opened through localhost moves to the address Hearth prints.
  // Only page loads: an API client that uses localhost is answered where it asked.
  app.addHook('onRequest', async (request, reply) => {
    if ((request.method !== 'GET' && request.method !== 'HEAD') || request.headers['sec-fetch-mode'] !== 'navigate') return;
    const address = request.server.server.address();
    const host = canonicalAppHost(request.headers.host, typeof address === 'object' && address ? address.address : undefined);
    if (host) return reply.redirect(`http://${host}${request.url}`, 307);
  });
  const built = existsSync(join(webRoot, 'index.html'));
  const hasFallback = existsSync(join(webRoot, '200.html'));
  // `/models` -> `models.html`: the top-level pages the build prerendered.
  const prerendered = new Map(
    (built ? readdirSync(webRoot) : [])
      .filter((name) => name.endsWith('.html') && name !== 'index.html' && name !== '200.html')
      .map((name) => [`/${name.slice(0, -'.html'.length)}`, name]),
  );
  if (built) {
    await app.register(fastifyStatic, {
      root: webRoot,
      wildcard: false,
      setHeaders(response, path) {
        void response.header('x-frame-options', FRAME_DENIAL['x-frame-options']);
        void response.header('content-security-policy', path.endsWith('.html') ? policyForPage(path) : FRAME_DENIAL['content-security-policy']);
        if (path.endsWith('sw.js') || path.endsWith('.html') || path.endsWith('.webmanifest')) void response.header('cache-control', 'no-cache');
        else if (path.includes(join('_app', 'immutable'))) void response.header('cache-control', 'public, max-age=31536000, immutable');
      },
    });
  } else {
    app.get('/', async (_request, reply) =>
      reply
        .type('text/plain; charset=utf-8')
        .send(
          `Hearth is running, but the app is not built yet. In the Hearth folder (${installFolder()}), run npm run build (npm start does it for you), then reload this page.\nThe API is at /v1.`,
        ),
    );
  }
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const isPage = request.method === 'GET' && familyOf(path) === 'web' && !/\.[a-z0-9]+$/i.test(path);
    const shell = isPage ? prerendered.get(path.replace(/\/+$/, '')) : undefined;
    const page = shell ?? (isPage && hasFallback ? '200.html' : undefined);
    if (page)
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-cache')
        .headers(FRAME_DENIAL)
        .header('content-security-policy', policyForPage(join(webRoot, page)))
        .sendFile(page);
    const served = (method: string, url: string) => app.findRoute({ method: method as HTTPMethods, url }) !== null;
    return reply.status(404).send(errorBody('route_not_found', notFoundMessage(request.method, path, served)));
  });
};

/**
 * A 404 that says what to do for the mistakes clients make most: a doubled /v1, a missing /v1.
 * Paths under /api are Ollama's API, with its own 404 (routes/ollama.ts). A hint names another
 * path only where `served` says this app answers it.
 */
export function notFoundMessage(method: string, path: string, served: (method: string, path: string) => boolean): string {
  const missing = `No route for ${method} ${path}.`;
  const single = path.replace(/^\/v1/, '');
  if (/^\/v1\/v1(\/|$)/.test(path) && served(method, single)) {
    return `${missing} Remove the extra /v1: the client's base URL already ends in /v1 and the client adds another (use ${single}).`;
  }
  if (WITHOUT_V1.test(path) && served(method, `/v1${path}`)) {
    return `${missing} Add /v1: the OpenAI API is served under /v1 (use /v1${path}), so a client's base URL ends in /v1.`;
  }
  if (WITHOUT_V1.test(path)) {
    return `${missing} Hearth serves the OpenAI API under /v1, but not ${method} /v1${path}: chat through POST /v1/chat/completions. Every route Hearth serves is listed in docs/routes.md.`;
  }
  return `${missing} Every route Hearth serves is listed in docs/routes.md.`;
}
