import { fileURLToPath } from 'node:url';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildChannelApp } from '../../../companion/src/channel-app.js';
import { checkDocument } from '../../../companion/src/config/document.js';
import { ROUTE_SCOPES, type RouteScope } from '#shared/api/access.js';
import { testApp, type TestApp } from '../../helpers/app.js';
import { appRoutes, documentedPath, documentedRoutes, type DocumentedRoute, type ListedRoute } from '../../helpers/routes.js';

/*
 * Every served route is guarded as reviewed. The reviewed list is docs/routes.md: one line per
 * route with the family a person chose for it. This sends each real route of both listeners the
 * requests its family must refuse, and checks the perimeter refuses them with that family's
 * answer: a route whose family changed by accident (an owner's action moved under /agents would
 * become key-scoped) fails here, whatever the route table says.
 */

const DOCS = fileURLToPath(new URL('../../../docs/routes.md', import.meta.url));
const REMOTE = '203.0.113.7';

/** Admin routes that carry their own proof instead of the admin credential (reviewed: each is named here on purpose). */
const OWN_PROOF = new Set([
  'GET /admin/session', // answers whether this browser is signed in
  'POST /admin/session', // the one-time sign-in code is the proof
  'DELETE /admin/session', // ends the session it is sent with
  'POST /admin/session/requests', // asking to be let in grants nothing by itself
  'POST /admin/session/requests/answer', // the request's secret is the proof
  'GET /admin/mcp/oauth/callback', // the OAuth state is the proof
  'GET /admin/cloud/oauth/callback', // the OAuth state is the proof
]);

let hearth: TestApp;
let channelApp: FastifyInstance;
let local: (ListedRoute & { family: string })[];
let channel: (ListedRoute & { family: string })[];

/** A concrete path for a route: each parameter and wildcard filled with a harmless sample. */
function concrete(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, 'sample').replace(/\*$/, 'sample');
}

function reviewed(routes: ListedRoute[], section: string, rows: DocumentedRoute[]): (ListedRoute & { family: string })[] {
  return routes.map((route) => {
    const row = rows.find((entry) => entry.section === section && entry.method === route.method && entry.path === documentedPath(route.url));
    // docs/routes.test.ts says how to add a missing line; here a route without one has no reviewed guard.
    expect(row, `${route.method} ${route.url} has no line in docs/routes.md under "## ${section}"`).toBeDefined();
    return { ...route, family: row!.family };
  });
}

beforeAll(async () => {
  hearth = await testApp({ withModel: false });
  const { document, problems } = checkDocument({
    ...structuredClone(hearth.services.config),
    server: { ...hearth.services.config.server, auth: { required: true } },
  });
  expect(problems).toEqual([]);
  hearth.services.reconfigure(document!);
  await hearth.app.ready();
  channelApp = await buildChannelApp({ services: hearth.services, tls: {} });
  await channelApp.ready();
  const rows = documentedRoutes(DOCS);
  local = reviewed(appRoutes(hearth.app), 'The local listener', rows);
  channel = reviewed(appRoutes(channelApp), 'The secure channel', rows);
});

afterAll(async () => {
  await channelApp?.close();
  await hearth?.close();
});

/** Sends a request exactly as given (no credential added) and answers its status and error code. */
async function send(app: FastifyInstance, route: ListedRoute, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') {
  const inject = app === channelApp ? (options: InjectOptions) => channelApp.inject(options) : (options: InjectOptions) => hearth.app.inject(options);
  const response = await inject({
    method: route.method as 'GET',
    url: concrete(route.url),
    headers: { host: '127.0.0.1:4777', ...headers },
    remoteAddress,
  });
  const code = (() => {
    try {
      const body = response.json() as { type?: string; error?: { code?: string; type?: string } | string };
      // Ollama's shape (/api) is the message alone: the status says which refusal it is.
      if (typeof body.error === 'string') return OLLAMA_REFUSALS[response.statusCode];
      // Anthropic's shape (the Messages routes) has no code: its type and the status say which refusal it is.
      return body.error?.code ?? (body.type === 'error' ? ANTHROPIC_REFUSALS[`${response.statusCode} ${body.error?.type}`] : undefined);
    } catch {
      return undefined;
    }
  })();
  return { status: response.statusCode, code };
}

/** The perimeter's refusals as Anthropic's shape words them (routes/anthropic/errors.ts). */
const ANTHROPIC_REFUSALS: Record<string, string> = {
  '401 authentication_error': 'invalid_api_key',
  '403 permission_error': 'permission_denied',
  '426 invalid_request_error': 'upgrade_required',
};

/** The perimeter's refusals in Ollama's shape (`{"error": "message"}`), by their status. */
const OLLAMA_REFUSALS: Record<number, string> = { 401: 'invalid_api_key', 403: 'permission_denied', 426: 'upgrade_required' };

const keyScoped = (family: string): family is RouteScope => (ROUTE_SCOPES as readonly string[]).includes(family) && family !== 'metrics';

describe('the local listener guards every route as docs/routes.md says', () => {
  it('admin routes refuse another local program without the admin credential, and everyone on another machine', async () => {
    const problems: string[] = [];
    for (const route of local.filter((entry) => entry.family === 'admin')) {
      const name = `${route.method} ${route.url}`;
      const bare = await send(hearth.app, route);
      if (OWN_PROOF.has(name) === (bare.code === 'admin_credential_required'))
        problems.push(`${name} without the credential answered ${bare.status} ${bare.code}`);
      const remote = await send(hearth.app, route, { authorization: `Bearer ${hearth.services.admin.token}` }, REMOTE);
      if (remote.status !== 403) problems.push(`${name} from another machine answered ${remote.status} ${remote.code}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
    // Each route named as carrying its own proof exists.
    for (const name of OWN_PROOF)
      expect(
        local.some((route) => `${route.method} ${route.url}` === name),
        name,
      ).toBe(true);
  });

  it('key-scoped routes refuse a request without a key, and a key without their scope, whatever their path', async () => {
    const problems: string[] = [];
    let probe = 0;
    const keys = new Map<string, string>();
    for (const scope of ROUTE_SCOPES) {
      keys.set(scope, hearth.services.keys.create({ label: `all but ${scope}`, scopes: ROUTE_SCOPES.filter((other) => other !== scope) }).key);
    }
    for (const route of local.filter((entry) => keyScoped(entry.family))) {
      const name = `${route.method} ${route.url} (${route.family})`;
      const bare = await send(hearth.app, route);
      if (bare.code !== 'invalid_api_key') problems.push(`${name} without a key answered ${bare.status} ${bare.code}`);
      const wrong = await send(hearth.app, route, { authorization: `Bearer ${keys.get(route.family)}` });
      if (wrong.code !== 'permission_denied') problems.push(`${name} with a key lacking its scope answered ${wrong.status} ${wrong.code}`);
      // The admin credential is no key (each from its own loopback address: failed keys are limited per address).
      const admin = await send(hearth.app, route, { authorization: `Bearer ${hearth.services.admin.token}` }, `127.0.${++probe >> 8}.${probe & 255}`);
      if (admin.code !== 'invalid_api_key') problems.push(`${name} with the admin credential answered ${admin.status} ${admin.code}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('agent routes answer another machine over plain HTTP only with 426, even with a key of every scope', async () => {
    const { key } = hearth.services.keys.create({ label: 'every scope', scopes: [...ROUTE_SCOPES] });
    const problems: string[] = [];
    for (const route of local.filter((entry) => entry.family === 'agents')) {
      const remote = await send(hearth.app, route, { authorization: `Bearer ${key}` }, REMOTE);
      if (remote.code !== 'upgrade_required') problems.push(`${route.method} ${route.url} from another machine answered ${remote.status} ${remote.code}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('public and metrics routes, and the app, answer this machine without any credential', async () => {
    const problems: string[] = [];
    for (const route of local.filter((entry) => ['public', 'metrics', 'web'].includes(entry.family))) {
      const bare = await send(hearth.app, route);
      if (bare.status === 401 || bare.status === 403) problems.push(`${route.method} ${route.url} (${route.family}) answered ${bare.status} ${bare.code}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });
});

describe('the secure channel guards every route as docs/routes.md says', () => {
  it('every route but the public ones needs a paired device', async () => {
    const problems: string[] = [];
    for (const route of channel) {
      const result = await send(channelApp, route);
      const refused = result.code === 'device_not_paired';
      if (refused === (route.family === 'public'))
        problems.push(`${route.method} ${route.url} (${route.family}) without a device answered ${result.status} ${result.code}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
