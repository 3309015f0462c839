import type { FastifyRequest } from 'fastify';
import type { AdminCredential } from '../access/admin-credential.js';

/** How long the app stays signed in. */
const SESSION_DAYS = 90;
const COOKIE_PREFIX = 'hearth_admin';

/**
 * The app's admin session cookie. Cookies do not separate ports, so the name carries the port:
 * two companions on one machine keep their sessions apart. HttpOnly (no script reads it),
 * SameSite=Strict (no other site's page sends it), Path=/admin (no other route receives it).
 */
export function sessionCookie(hostHeader: string | undefined, value: string | null): string {
  const port = /:(\d+)$/.exec(hostHeader ?? '')?.[1];
  const name = port ? `${COOKIE_PREFIX}_${port}` : COOKIE_PREFIX;
  const maxAge = value === null ? 0 : SESSION_DAYS * 86_400;
  return `${name}=${value ?? ''}; Path=/admin; HttpOnly; SameSite=Strict; Max-Age=${maxAge}`;
}

/** Whether the request presents the admin credential: the token as a Bearer token, or the app's session cookie. */
export function presentsAdminCredential(request: FastifyRequest, admin: Pick<AdminCredential, 'acceptsToken' | 'acceptsSession'>): boolean {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
  if (bearer !== undefined) return admin.acceptsToken(bearer);
  return sessionValues(request.headers.cookie).some((value) => admin.acceptsSession(value));
}

function sessionValues(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(';')
    .map((part) => part.trim())
    .filter((part) => part.startsWith(`${COOKIE_PREFIX}=`) || part.startsWith(`${COOKIE_PREFIX}_`))
    .map((part) => part.slice(part.indexOf('=') + 1))
    .slice(0, 8);
}

/** The address of the app's sign-in page for a one-time code; the code rides in the fragment, which no server or log ever sees. */
export function signInUrl(hostHeader: string | undefined, code: string): string {
  return `http://${hostHeader ?? '127.0.0.1'}/sign-in#${code}`;
}
