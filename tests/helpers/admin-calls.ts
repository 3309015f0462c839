import type { InjectOptions } from 'fastify';

/**
 * One call to each kind of admin route (status, keys, the config document, MCP services, a
 * model, the sign-in link) and to a path no admin route serves: each guard of the admin family
 * must refuse every one of them the same way. The bodies are valid, so a call that got through
 * would change something (a key, the configuration) and the test would see it.
 */
export const ADMIN_CALLS: readonly InjectOptions[] = [
  { method: 'GET', url: '/admin/status' },
  { method: 'GET', url: '/admin/keys' },
  { method: 'POST', url: '/admin/keys', payload: { label: 'intruder' } },
  { method: 'DELETE', url: '/admin/keys/key_0000000000000000' },
  { method: 'GET', url: '/admin/config/export' },
  { method: 'GET', url: '/admin/config/export?format=json' },
  { method: 'GET', url: '/admin/config/schema' },
  { method: 'POST', url: '/admin/config/plan', payload: { document: { version: 1 } } },
  { method: 'POST', url: '/admin/config/apply', payload: { document: { version: 1, server: { auth: { required: false } } }, confirm_high_risk: true } },
  { method: 'GET', url: '/admin/mcp/services' },
  { method: 'POST', url: '/admin/models/tiny/unload' },
  { method: 'POST', url: '/admin/session/links' },
  { method: 'GET', url: '/admin/no-such-route' },
];
