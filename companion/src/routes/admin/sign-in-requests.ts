import { sessionCookie } from '../../http/admin-session.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, requiredBody, type BodySchema } from '../schema.js';
import type { SignInAnswer, SignInAnswerRequest, SignInApproval, SignInAsk, WaitingSignIns } from '#shared/api/admin.js';

export const answerBody = requiredBody({ secret: nonEmptyString(200) }) satisfies BodySchema<SignInAnswerRequest>;

export const approvalBody = requiredBody({ code: nonEmptyString(40) }) satisfies BodySchema<SignInApproval>;

const iso = (time: number) => new Date(time).toISOString();

/**
 * Signing in a second browser on this machine without a terminal: the new browser asks (it needs
 * no credential, only loopback and the app's own origin, like every admin route), shows a code
 * and asks again for the answer with its secret; a signed-in browser lists the waiting requests,
 * approves one with the code the person reads off the new browser, or refuses one.
 */
export const signInRequestRoutes: RoutePlugin<AdminContext, 'admin'> = async (app, { admin }) => {
  app.post('/admin/session/requests', { config: { adminCredential: false } }, async (_request, reply): Promise<SignInAsk> => {
    const { code, secret, expiresAt } = admin.sessions.requests.start();
    void reply.status(201).header('cache-control', 'no-store');
    return { code, secret, expires_at: iso(expiresAt) };
  });

  app.post<{ Body: SignInAnswerRequest }>(
    '/admin/session/requests/answer',
    { config: { adminCredential: false }, schema: { body: answerBody } },
    async (request, reply): Promise<SignInAnswer> => {
      void reply.header('cache-control', 'no-store');
      const { state, expiresAt } = admin.sessions.requests.look(request.body.secret);
      if (state !== 'approved') return { state, expires_at: iso(expiresAt) };
      const session = admin.sessions.start();
      void reply.header('set-cookie', sessionCookie(request.headers.host, session.cookie));
      return { state, proof: session.proof, expires_at: iso(session.expiresAt) };
    },
  );

  app.get('/admin/session/requests', async (_request, reply): Promise<WaitingSignIns> => {
    void reply.header('cache-control', 'no-store');
    return { data: admin.sessions.requests.list().map(({ id, askedAt, expiresAt }) => ({ id, asked_at: iso(askedAt), expires_at: iso(expiresAt) })) };
  });

  app.post<{ Body: SignInApproval }>('/admin/session/requests/approve', { schema: { body: approvalBody } }, async (request, reply) => {
    admin.sessions.requests.approve(request.body.code);
    return reply.status(204).send();
  });

  app.delete<{ Params: { id: string } }>('/admin/session/requests/:id', async (request, reply) => {
    admin.sessions.requests.refuse(request.params.id);
    return reply.status(204).send();
  });
};
