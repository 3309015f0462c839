import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';
import { errorBody } from '../errors.js';
import { FRAME_DENIAL, policyForPage } from '../http/content-security.js';
import { familyOf } from '../http/perimeter.js';
import type { RouteOptions } from './plugin.js';

/**
 * Serves the built PWA at `/`. A page prerendered at build time (`/models` -> models.html) is
 * served as its HTML shell, so it paints before the JavaScript runs; other page paths get the
 * SPA fallback; anything else (API paths, missing files) gets the JSON 404 every route uses.
 */
export async function webRoutes(app: FastifyInstance, options: RouteOptions): Promise<void> {
  const built = existsSync(join(options.webRoot, 'index.html'));
  const hasFallback = existsSync(join(options.webRoot, '200.html'));
  // `/models` -> `models.html`: the top-level pages the build prerendered.
  const prerendered = new Map(
    (built ? readdirSync(options.webRoot) : [])
      .filter((name) => name.endsWith('.html') && name !== 'index.html' && name !== '200.html')
      .map((name) => [`/${name.slice(0, -'.html'.length)}`, name]),
  );
  if (built) {
    await app.register(fastifyStatic, {
      root: options.webRoot,
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
        .send('Hearth is running, but the web app is not built. Run `npm run build` (npm start does it for you) and reload.\nThe API is at /v1.'),
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
        .header('content-security-policy', policyForPage(join(options.webRoot, page)))
        .sendFile(page);
    return reply.status(404).send(errorBody('route_not_found', `No route for ${request.method} ${path}. See README.md for the routes Hearth serves.`));
  });
}
