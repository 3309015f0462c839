import type { FastifyRequest } from 'fastify';
import type { AdminCredential } from '../access/admin-credential.js';
import { SESSION_IDLE_DAYS } from '../access/admin-sessions.js';

const COOKIE_PREFIX = 'hearth_admin';

/** The header that carries the app's session proof, which the app keeps in its own origin's storage. */
export const SESSION_PROOF_HEADER = 'x-hearth-session';

/** The paths the admin rule guards: the admin routes, and the owner's approvals of agents' tool calls. */
const GUARDED_PATHS = ['/admin', '/agents/approvals'];

/**
 * The name of this server's session cookie. Cookies do not separate ports, so the name carries
 * the port: two companions on one machine keep their sessions apart. (That is tidiness, not
 * protection: any page served from 127.0.0.1 can get the browser to send it this cookie, which is
 * why the cookie alone never proves a session.)
 */
function cookieName(hostHeader: string | undefined): string {
  const port = /:(\d+)$/.exec(hostHeader ?? '')?.[1];
  return port ? `${COOKIE_PREFIX}_${port}` : COOKIE_PREFIX;
}

/**
 * The app's admin session cookies: HttpOnly (no script reads it), SameSite=Strict, one cookie per
 * guarded path (Path=/admin and Path=/agents/approvals: no other route receives it). `null` clears them.
 */
export function sessionCookie(hostHeader: string | undefined, value: string | null): string[] {
  const maxAge = value === null ? 0 : SESSION_IDLE_DAYS * 86_400;
  return GUARDED_PATHS.map((path) => `${cookieName(hostHeader)}=${value ?? ''}; Path=${path}; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`);
}

/** The session a request presents: this server's cookie and the proof header, when it carries both. */
export function presentedSession(request: FastifyRequest): { cookie: string; proof: string } | undefined {
  const proof = request.headers[SESSION_PROOF_HEADER];
  if (typeof proof !== 'string' || proof === '') return undefined;
  const cookie = cookieValue(request.headers.cookie, cookieName(request.headers.host));
  return cookie ? { cookie, proof } : undefined;
}

/** Whether the request presents the admin credential: the token as a Bearer token, or an app session (cookie and proof). */
export function presentsAdminCredential(request: FastifyRequest, admin: Pick<AdminCredential, 'acceptsToken' | 'acceptsSession'>): boolean {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer !== undefined) return admin.acceptsToken(bearer);
  const session = presentedSession(request);
  return session !== undefined && admin.acceptsSession(session.cookie, session.proof);
}

/** The value of the cookie named exactly `name` (the first of at most 32 cookies looked at). */
function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';').slice(0, 32)) {
    const trimmed = part.trim();
    if (trimmed.startsWith(`${name}=`)) return trimmed.slice(name.length + 1) || undefined;
  }
  return undefined;
}

/** The address of the app's sign-in page for a one-time code; the code rides in the fragment, which no server or log ever sees. */
export function signInUrl(hostHeader: string | undefined, code: string): string {
  return `http://${hostHeader ?? '127.0.0.1'}/sign-in#${code}`;
}
