import { HearthError } from '../../errors.js';
import { presentedSession, presentsAdminCredential, sessionCookie, signInUrl } from '../../http/admin-session.js';
import { command, installFolder, invocation, testModelCommand } from '../../invocation.js';
import { defaultDataDirectory } from '../../store/data-dir.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, requiredBody, type BodySchema } from '../schema.js';
import type { SessionsEnded, SessionState, SignInLink, SignInRequest, SignInResult } from '#shared/api/admin.js';

export const signInBody = requiredBody({ code: nonEmptyString(200) }) satisfies BodySchema<SignInRequest>;

/**
 * The app's sign-in: a one-time link (opened at start, or printed by `hearth open`) is exchanged
 * for a session: an HttpOnly cookie, and a proof the app keeps in its own origin's storage and
 * sends as a header. Asking whether the browser is signed in, the exchange and the sign-out carry
 * their own proof (or need none), so they are the admin routes that need no admin credential;
 * they still need loopback and the app's own origin.
 */
export const sessionRoutes: RoutePlugin<AdminContext, 'admin' | 'paths' | 'catalog'> = async (app, { admin, paths, catalog }) => {
  // The app asks this instead of an admin route that would answer 401 when it is signed out.
  app.get('/admin/session', { config: { adminCredential: false } }, async (request, reply): Promise<SessionState> => {
    void reply.header('cache-control', 'no-store');
    const spelled = invocation();
    const signedIn = presentsAdminCredential(request, admin);
    // The data folder is no secret from this machine's users (it is on the server's command line).
    const dataDir = { dir: paths.root, defaultDir: defaultDataDirectory() };
    const state: SessionState = {
      signed_in: signedIn,
      sign_in_command: command('open', spelled, dataDir),
      key_command: command('keys create --label browser', spelled, dataDir),
      start_command: spelled.start,
      in_folder: spelled.folder !== undefined,
      external_models: catalog.externalSources,
    };
    // Folders only to the owner: another local user's page may ask this.
    if (!signedIn) return state;
    return {
      ...state,
      test_model_command: testModelCommand(paths.root, defaultDataDirectory()),
      ...(spelled.folder ? { folder: spelled.folder } : {}),
      scripts_folder: installFolder(),
      models_dir: paths.models,
    };
  });

  app.post<{ Body: SignInRequest }>('/admin/session', { config: { adminCredential: false }, schema: { body: signInBody } }, async (request, reply) => {
    if (!admin.redeem(request.body.code)) {
      throw new HearthError(
        'admin_credential_required',
        'This sign-in link was already used or has expired. For a new one, run hearth open on the machine Hearth runs on, or restart Hearth.',
      );
    }
    const session = admin.sessions.start();
    const result: SignInResult = { proof: session.proof, expires_at: new Date(session.expiresAt).toISOString() };
    return reply.header('set-cookie', sessionCookie(request.headers.host, session.cookie)).header('cache-control', 'no-store').send(result);
  });

  // Ends this browser's session for good (the cookie and proof stop working everywhere), and clears the cookie.
  app.delete('/admin/session', { config: { adminCredential: false } }, async (request, reply) => {
    const session = presentedSession(request);
    if (session) admin.sessions.end(session.cookie, session.proof);
    return reply.status(204).header('set-cookie', sessionCookie(request.headers.host, null)).header('cache-control', 'no-store').send();
  });

  // "Sign out everywhere": every browser's session ends, this one's included.
  app.delete('/admin/sessions', async (request, reply): Promise<SessionsEnded> => {
    void reply.header('set-cookie', sessionCookie(request.headers.host, null)).header('cache-control', 'no-store');
    return { ended: admin.sessions.endAll() };
  });

  app.post('/admin/session/links', async (request, reply): Promise<SignInLink> => {
    const { code, expiresAt } = admin.issueLink();
    void reply.header('cache-control', 'no-store');
    return { url: signInUrl(request.headers.host, code), expires_at: new Date(expiresAt).toISOString() };
  });
};
