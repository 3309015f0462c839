import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { KEY_PREFIX, type KeyGrant, type KeyStore } from '../access/keys.js';
import { FailureLimiter } from '../access/failures.js';
import { HearthError } from '../errors.js';
import { AGENT_ID_RULE, isAgentId } from '../ids.js';
import type { ServerSettings } from '#shared/api/config.js';
import type { ChannelStatus } from '#shared/api/remote.js';
import { ROUTE_TABLE, type RouteFamily } from '#shared/api/routes.js';
import type { AdminCredential } from '../access/admin-credential.js';
import { scopeAllowsAgent } from '../access/agent-target.js';
import type { AgentDispatcher } from '../agents/dispatcher.js';
import { hostName, isLoopbackAddress, isLoopbackBind, isLoopbackName, ownOrigin, proxyHeaderOf } from '../access/hosts.js';
import { presentsAdminCredential } from './admin-session.js';
import { refuseRemoteAgentCall } from './upgrade-rule.js';

export type { RouteFamily };

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling: the key's grant, or null when no key was presented. */
    grant: KeyGrant | null;
  }
  interface FastifyContextConfig {
    /**
     * false on the few admin routes that carry their own proof instead of the admin credential
     * (the app's sign-in, whose one-time code is the proof; the OAuth redirect, whose state is).
     */
    adminCredential?: boolean;
  }
}

/** Which family a path belongs to (the route table); the family decides which key scope it needs. */
export function familyOf(path: string): RouteFamily {
  return ROUTE_TABLE.find((route) => route.pattern.test(path))?.family ?? 'web';
}

const ALLOWED_HEADERS =
  'authorization, x-api-key, anthropic-version, anthropic-beta, content-type, x-service-agent-id, x-service-conversation-id, mcp-session-id, mcp-protocol-version, last-event-id';

/** What the perimeter needs of the running server. */
export interface PerimeterInputs {
  /** The server settings in force (they change when a configuration is applied). */
  server(): ServerSettings;
  keys: Pick<KeyStore, 'verify'>;
  admin: Pick<AdminCredential, 'acceptsToken' | 'acceptsSession'>;
  /** Where an agent id points: the dispatcher's reading, the one the agents routes act on. */
  agents: Pick<AgentDispatcher, 'place'>;
  /** The secure channel's state, named in the 426 a plain-HTTP agent call from another machine gets. */
  channel(): ChannelStatus;
}

/**
 * The perimeter, checked before any route runs, the one place a route's guard is decided from
 * its family: the upgrade rule for agent routes, Host (DNS rebinding), Origin (CORS), the admin
 * rule (loopback peer, no proxy, the admin credential), keys and their scopes, the agent a
 * scoped key may act for, and the per-key concurrency cap. Forwarded headers never vouch for anyone: only the socket peer does, and a
 * request that carries one came through a proxy, so it is treated as remote.
 */
export function installPerimeter(app: FastifyInstance, inputs: PerimeterInputs): void {
  const failures = new FailureLimiter();
  const open = new Map<string, number>();
  app.decorateRequest('grant', null);

  app.addHook('onRequest', async (request, reply) => {
    const server = inputs.server();
    // Classify what the router will serve: the matched route, else the decoded path. The raw
    // URL can be percent-encoded (/%61dmin) or absolute-form (http://host/admin) and lie.
    const family = familyOf(request.routeOptions.url ?? decodedPath(request));
    const host = hostName(request.headers.host);
    const peerIsLoopback = isLoopbackAddress(request.socket.remoteAddress);
    const proxyHeader = proxyHeaderOf(request.headers);
    // No key makes a plain-HTTP agent call from another machine acceptable.
    if (family === 'agents') refuseRemoteAgentCall(request, reply, inputs.channel);

    if (family === 'admin' && !isLoopbackName(host)) {
      throw new HearthError('host_not_allowed', `Admin routes need a loopback Host (127.0.0.1, localhost or [::1]), not "${request.headers.host ?? ''}".`);
    }
    if (loopbackBound(request)) {
      if (!isLoopbackName(host) && !server.allowed_hosts.includes(host ?? '')) {
        throw new HearthError(
          'host_not_allowed',
          `The Host "${request.headers.host ?? ''}" does not name this server. Use http://127.0.0.1 or http://localhost, or add the name to server.allowed_hosts.`,
        );
      }
    }

    const origin = request.headers.origin;
    const own = ownOrigin(request.headers.host);
    if (family === 'admin') {
      if (!peerIsLoopback)
        throw new HearthError('permission_denied', 'Admin routes are only available from the machine Hearth runs on (loopback). A key does not change that.');
      if (proxyHeader)
        throw new HearthError(
          'permission_denied',
          `Admin routes do not answer requests that came through a proxy (this one carries ${proxyHeader}). Use them on the machine Hearth runs on, at its loopback address.`,
        );
      if (origin !== undefined && origin !== own)
        throw new HearthError('origin_not_allowed', `Admin routes accept no cross-origin requests (Origin ${origin}).`);
      if (request.routeOptions.config?.adminCredential !== false && !presentsAdminCredential(request, inputs.admin)) {
        throw new HearthError('admin_credential_required');
      }
    } else if (origin !== undefined && origin !== own) {
      const origins = server.cors.origins;
      const allowed = origins.includes('*') || origins.includes(origin);
      if (!allowed)
        throw new HearthError('origin_not_allowed', `The origin ${origin} may not call Hearth. Add it to server.cors.origins in config.yaml to allow it.`);
      void reply.header('access-control-allow-origin', origins.includes(origin) ? origin : '*').header('vary', 'Origin');
      if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) {
        return reply
          .status(204)
          .header('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS')
          .header('access-control-allow-headers', ALLOWED_HEADERS)
          .header('access-control-expose-headers', 'retry-after, mcp-session-id, x-service-conversation-id')
          .header('access-control-max-age', '600')
          .send();
      }
    }
    if (request.method === 'OPTIONS' && request.headers['access-control-request-method']) return reply.status(204).send();

    if (family === 'public' || family === 'web' || family === 'admin') return;
    if (family === 'metrics') {
      request.grant = metricsGrant(request, inputs.keys, failures, peerIsLoopback, proxyHeader);
      return;
    }
    const attributed = request.headers['x-service-agent-id'];
    if (attributed !== undefined && (typeof attributed !== 'string' || !isAgentId(attributed))) {
      throw new HearthError('invalid_request_error', `X-Service-Agent-Id must be an agent id: ${AGENT_ID_RULE}.`, { param: 'X-Service-Agent-Id' });
    }
    request.grant = authenticate(request, inputs.keys, failures, server.auth.required || proxyHeader !== undefined, proxyHeader);
    if (!request.grant) return;
    if (!request.grant.scopes.includes(family)) {
      throw new HearthError('permission_denied', `This key may not use ${family} routes (its scopes: ${request.grant.scopes.join(', ') || 'none'}).`);
    }
    const named = request.headers['x-service-agent-id'];
    if (typeof named === 'string') assertAgent(request, inputs.agents, named, 'X-Service-Agent-Id');
    // The agent the route will act for is its decoded `id` parameter, exactly as the route reads it
    // (`/agents/home%2Fshell/run` names `home/shell`, not `home`). Routes without one (/agents/runs/…)
    // name a run, and check the run's agent themselves.
    const routeAgent = family === 'agents' ? (request.params as Record<string, unknown> | undefined)?.id : undefined;
    if (typeof routeAgent === 'string') assertAgent(request, inputs.agents, routeAgent, 'id');
    limitConcurrency(request.grant.id, server.limits.streams_per_key, open, reply);
  });
}

function decodedPath(request: FastifyRequest): string {
  let path: string;
  try {
    path = new URL(request.url, 'http://localhost').pathname;
  } catch {
    path = request.url.split('?')[0]!;
  }
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

const boundToLoopback = new WeakMap<object, boolean>();

/** Whether the listening socket is on loopback; asked of the socket once, not per request. */
function loopbackBound(request: FastifyRequest): boolean {
  const known = boundToLoopback.get(request.server.server);
  if (known !== undefined) return known;
  const address = request.server.server.address();
  if (typeof address !== 'object' || !address) return true;
  const loopback = isLoopbackBind(address.address);
  boundToLoopback.set(request.server.server, loopback);
  return loopback;
}

/**
 * The key a request presents, read the same way on every family that takes keys: `Authorization:
 * Bearer <key>` (OpenAI's clients) or `x-api-key: <key>` (Anthropic's SDK, Claude Code). Clients
 * send a token of their own in one of them whether or not one is needed, so a Hearth key in
 * either wins over a token that is not one. Never logged (log-format.ts redacts both headers).
 */
function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  const bearer = /^bearer\s+/i.test(header ?? '') ? header!.replace(/^bearer\s+/i, '').trim() : undefined;
  const apiKey = request.headers['x-api-key'];
  const given = [bearer, typeof apiKey === 'string' ? apiKey.trim() : undefined].filter((token): token is string => !!token);
  return given.find((token) => token.startsWith(KEY_PREFIX)) ?? given[0];
}

/** `required` is true when auth is on, and for every request that came through a proxy (named by `proxyHeader`). */
function authenticate(
  request: FastifyRequest,
  keys: PerimeterInputs['keys'],
  failures: FailureLimiter,
  required: boolean,
  proxyHeader: string | undefined,
): KeyGrant | null {
  const token = presentedKey(request);
  // With auth off, tokens that are not Hearth keys are ignored: OpenAI clients always send one.
  if (!token || (!required && !token.startsWith(KEY_PREFIX))) {
    if (!required) return null;
    throw new HearthError(
      'invalid_api_key',
      proxyHeader
        ? `This request came through a proxy (it carries ${proxyHeader}), so it needs an access key: send Authorization: Bearer <key>. Create one with \`hearth keys create\`.`
        : 'This server requires an access key: send Authorization: Bearer <key>. Create one with `hearth keys create`.',
    );
  }
  // Verified first: a valid key always works, so bad keys from the same address (every local
  // client, everything behind one proxy) can never lock it out. Only failures are slowed down.
  const verified = keys.verify(token);
  if (!verified.ok) {
    const address = request.socket.remoteAddress ?? 'unknown';
    const wait = failures.waitSeconds(address);
    if (wait > 0) throw new HearthError('rate_limit_exceeded', `Too many failed authentications from this address. Retry in ${wait} s.`, { retryAfter: wait });
    failures.record(address);
    const why = verified.reason === 'unknown' ? 'is not a valid key' : `has ${verified.reason === 'expired' ? 'expired' : 'been revoked'}`;
    throw new HearthError('invalid_api_key', `The access key ${why}. Check the key, or create a new one with \`hearth keys create\`.`);
  }
  return verified.grant;
}

/**
 * GET /metrics: this machine's own requests (loopback peer, no proxy header) need no key, so a
 * Prometheus server beside Hearth scrapes it as it is; anyone else needs a key with the metrics
 * scope. A Hearth key, whenever one is sent, must have that scope (403 otherwise).
 */
function metricsGrant(
  request: FastifyRequest,
  keys: PerimeterInputs['keys'],
  failures: FailureLimiter,
  peerIsLoopback: boolean,
  proxyHeader: string | undefined,
): KeyGrant | null {
  const local = peerIsLoopback && proxyHeader === undefined;
  const presentsKey = presentedKey(request)?.startsWith(KEY_PREFIX) === true;
  if (!presentsKey && !local)
    throw new HearthError(
      'permission_denied',
      proxyHeader
        ? `Metrics are not served through a proxy (this request carries ${proxyHeader}) without a key that has the metrics scope: create one with \`hearth keys create --scope metrics\`.`
        : 'Metrics are served to this machine, or to a key with the metrics scope: create one with `hearth keys create --scope metrics`.',
    );
  const grant = presentsKey ? authenticate(request, keys, failures, true, proxyHeader) : null;
  if (grant && !grant.scopes.includes('metrics'))
    throw new HearthError(
      'permission_denied',
      `This key may not read metrics (its scopes: ${grant.scopes.join(', ') || 'none'}); create one with \`hearth keys create --scope metrics\`.`,
    );
  return grant;
}

/** Refuses a key scoped to one agent acting for another (the agent as the dispatcher places the id). */
function assertAgent(request: FastifyRequest, agents: PerimeterInputs['agents'], agentId: string, param: string): void {
  const agent = request.grant?.agent;
  if (!scopeAllowsAgent(agent, agents.place(agentId))) {
    throw new HearthError('permission_denied', `This key may only act for agent "${agent}", not "${agentId}".`, { param });
  }
}

function limitConcurrency(keyId: string, cap: number, open: Map<string, number>, reply: FastifyReply): void {
  const count = open.get(keyId) ?? 0;
  if (count >= cap)
    throw new HearthError('rate_limit_exceeded', `This key already has ${count} requests open (server.limits.streams_per_key). Retry when one finishes.`, {
      retryAfter: 1,
    });
  open.set(keyId, count + 1);
  reply.raw.once('close', () => {
    const now = (open.get(keyId) ?? 1) - 1;
    if (now <= 0) open.delete(keyId);
    else open.set(keyId, now);
  });
}
