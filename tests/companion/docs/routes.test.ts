import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyOf } from '../../../companion/src/http/perimeter.js';
import { buildChannelApp } from '../../../companion/src/channel-app.js';
import { webRoutes } from '../../../companion/src/routes/web.js';
import { ROUTE_TABLE } from '#shared/api/routes.js';
import { testApp } from '../../helpers/app.js';
import { appRoutes, documentedPath, documentedRoutes, type ListedRoute } from '../../helpers/routes.js';

/*
 * One route table (shared/src/api/routes.ts) says which family every path belongs to; the
 * perimeter, the app's request helper, the service worker and the page fallback all read it.
 * This compares it with what the two apps really serve (printRoutes of the local listener and of
 * the secure channel) and with the route list in docs/routes.md: every route has a family and a
 * line in the docs, and the docs name nothing that is not served.
 */

const DOCS = fileURLToPath(new URL('../../../docs/routes.md', import.meta.url));
const LOCAL = 'The local listener';
const CHANNEL = 'The secure channel';
const FAMILIES = 'inference, images, agents, tools, memory, admin or public';

let local: ListedRoute[];
let channel: ListedRoute[];
/** The routes routes/web.ts adds for the app itself (with no build: `GET /`); their family is web. */
let web: ListedRoute[];
let close: () => Promise<void>;
let channelApp: FastifyInstance;

beforeAll(async () => {
  const built = await testApp({ withModel: false });
  close = built.close;
  await built.app.ready();
  local = appRoutes(built.app);
  channelApp = await buildChannelApp({ services: built.services, tls: {} });
  await channelApp.ready();
  channel = appRoutes(channelApp);
  const bare = Fastify();
  await bare.register(webRoutes, { webRoot: '/nonexistent' });
  await bare.ready();
  web = appRoutes(bare);
  await bare.close();
});

afterAll(async () => {
  await channelApp?.close();
  await close?.();
});

const docsLine = (route: ListedRoute, family = '<family>') => `| \`${route.method}\` | \`${documentedPath(route.url)}\` | ${family} | <what it does> |`;

describe('the route table', () => {
  it('gives every route of both listeners a family', () => {
    const isWeb = (route: ListedRoute) => web.some((page) => page.method === route.method && page.url === route.url);
    expect(web.length).toBeGreaterThan(0);
    const missing = [...local, ...channel]
      .filter((route) => familyOf(route.url) === 'web' && !isWeb(route))
      .map(
        (route) =>
          `${route.method} ${route.url} matches no row of ROUTE_TABLE in shared/src/api/routes.ts, so it would be guarded as an app page.` +
          ` Add a row (before any broader row) such as { family: '<${FAMILIES}>', pattern: /^\\/${route.url.split('/')[1]}(?:[/?]|$)/ }.`,
      );
    expect(missing, missing.join('\n')).toEqual([]);
  });

  it('has no row that names no route', () => {
    const all = [...local, ...channel];
    const stale = ROUTE_TABLE.filter((row) => !all.some((route) => ROUTE_TABLE.find((first) => first.pattern.test(route.url)) === row)).map(
      (row) => `The row { family: '${row.family}', pattern: ${String(row.pattern)} } of ROUTE_TABLE decides no route of either listener: remove it.`,
    );
    expect(stale, stale.join('\n')).toEqual([]);
  });
});

describe('docs/routes.md', () => {
  const rows = () => documentedRoutes(DOCS);

  it('documents every route of both listeners, with its family', () => {
    const problems: string[] = [];
    for (const [section, routes] of [
      [LOCAL, local],
      [CHANNEL, channel],
    ] as const) {
      for (const route of routes) {
        const family = familyOf(route.url);
        const row = rows().find((entry) => entry.section === section && entry.method === route.method && entry.path === documentedPath(route.url));
        if (!row) problems.push(`docs/routes.md has no line for ${route.method} ${route.url} under "## ${section}". Add: ${docsLine(route, family)}`);
        else if (row.family !== family)
          problems.push(`docs/routes.md:${row.line} gives ${route.method} ${route.url} the family "${row.family}"; the route table says "${family}".`);
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('documents nothing that is not served, and each route once', () => {
    const served = new Map([
      [LOCAL, local],
      [CHANNEL, channel],
    ]);
    const problems: string[] = [];
    const seen = new Set<string>();
    for (const row of rows()) {
      const routes = served.get(row.section);
      const key = `${row.section} ${row.method} ${row.path}`;
      if (!routes)
        problems.push(`docs/routes.md:${row.line} is a route line under "## ${row.section}"; route lines belong under "## ${LOCAL}" or "## ${CHANNEL}".`);
      else if (!routes.some((route) => route.method === row.method && documentedPath(route.url) === row.path))
        problems.push(`docs/routes.md:${row.line} documents ${row.method} ${row.path}, which "${row.section}" does not serve: remove the line or correct it.`);
      if (seen.has(key)) problems.push(`docs/routes.md:${row.line} documents ${row.method} ${row.path} a second time.`);
      seen.add(key);
    }
    expect(rows().length).toBeGreaterThan(0);
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
