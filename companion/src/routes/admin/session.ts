import type { FastifyInstance } from 'fastify';
import { HearthError } from '../../errors.js';
import { sessionCookie, signInUrl } from '../../http/admin-session.js';
import type { RouteOptions } from '../plugin.js';
import type { SignInLink, SignInRequest } from '#shared/api/admin.js';

const signInBody = {
  type: 'object',
  required: ['code'],
  additionalProperties: false,
  properties: { code: { type: 'string', minLength: 1, maxLength: 200 } },
} as const;

/**
 * The app's sign-in: a one-time link (printed at start and by `hearth open`) is exchanged for an
 * HttpOnly session cookie. The exchange and the sign-out carry their own proof, so they are the
 * admin routes that need no admin credential; they still need loopback and the app's own origin.
 */
export async function sessionRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  app.post<{ Body: SignInRequest }>('/admin/session', { config: { adminCredential: false }, schema: { body: signInBody } }, async (request, reply) => {
    if (!services.admin.redeem(request.body.code)) {
      throw new HearthError(
        'admin_credential_required',
        'This sign-in link was already used or has expired. Run `hearth open` on the machine Hearth runs on for a new one.',
      );
    }
    return reply.status(204).header('set-cookie', sessionCookie(request.headers.host, services.admin.session)).header('cache-control', 'no-store').send();
  });

  app.delete('/admin/session', { config: { adminCredential: false } }, async (request, reply) =>
    reply.status(204).header('set-cookie', sessionCookie(request.headers.host, null)).send(),
  );

  app.post('/admin/session/links', async (request, reply): Promise<SignInLink> => {
    const { code, expiresAt } = services.admin.issueLink();
    void reply.header('cache-control', 'no-store');
    return { url: signInUrl(request.headers.host, code), expires_at: new Date(expiresAt).toISOString() };
  });
}
