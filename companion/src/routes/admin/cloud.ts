import { HearthError } from '../../errors.js';
import { callbackPage } from '../../http/callback-page.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { CloudAgentSummary, CloudLoginStart, CloudWorkspaceList, CloudWorkspaceStatus } from '#shared/api/remote.js';
import { pathParams, shortName } from '../schema.js';

/** The loopback redirect of a workspace sign-in (authorization code + PKCE). */
export const CLOUD_CALLBACK_PATH = '/admin/cloud/oauth/callback';

export const nameParams = pathParams({ name: shortName });

/** Cloud workspaces: sign-in state, sign-in (browser or device grant), sign-out, and their published agents. */
export const cloudRoutes: RoutePlugin<AdminContext, 'config' | 'cloud'> = async (app, { config, cloud }) => {
  const { signIn, agents } = cloud;

  app.get('/admin/cloud/workspaces', async (): Promise<CloudWorkspaceList> => ({
    object: 'list',
    data: config().cloud_workspaces.map((workspace) => signIn.status(workspace.name)),
  }));

  app.get<{ Params: { name: string } }>('/admin/cloud/workspaces/:name', { schema: { params: nameParams } }, async (request): Promise<CloudWorkspaceStatus> =>
    signIn.status(request.params.name),
  );

  app.get<{ Params: { name: string } }>(
    '/admin/cloud/workspaces/:name/agents',
    { schema: { params: nameParams } },
    async (request): Promise<{ object: 'list'; data: CloudAgentSummary[] }> => ({
      object: 'list',
      data: agents.summaries(await agents.list(request.params.name)),
    }),
  );

  // The redirect goes to this companion on the loopback IP literal (RFC 8252); any port is accepted by native clients.
  app.post<{ Params: { name: string } }>(
    '/admin/cloud/workspaces/:name/login',
    { schema: { params: nameParams } },
    async (request): Promise<CloudLoginStart> => {
      const address = request.server.server.address();
      if (typeof address !== 'object' || !address) throw new HearthError('internal_error', 'The listening address is unknown.');
      const host = address.family === 'IPv6' && address.address !== '::' ? '[::1]' : '127.0.0.1';
      return signIn.begin(request.params.name, `http://${host}:${address.port}${CLOUD_CALLBACK_PATH}`);
    },
  );

  app.post<{ Params: { name: string } }>(
    '/admin/cloud/workspaces/:name/logout',
    { schema: { params: nameParams } },
    async (request): Promise<CloudWorkspaceStatus> => signIn.logout(request.params.name),
  );

  // The authorization server redirects the browser here: the state it carries is the proof, not the admin credential.
  app.get(CLOUD_CALLBACK_PATH, { config: { adminCredential: false } }, async (request, reply) => {
    const query = new URL(request.url, 'http://127.0.0.1').searchParams;
    if (query.get('error')) {
      const description = query.get('error_description');
      return callbackPage(
        reply,
        400,
        'Sign-in was not completed',
        `The authorization server answered: ${query.get('error')}${description ? ` (${description})` : ''}.`,
      );
    }
    if (!query.get('code') || !query.get('state')) return callbackPage(reply, 400, 'Sign-in was not completed', 'The redirect carries no code or state.');
    try {
      const status = await signIn.finish(query);
      return callbackPage(
        reply,
        200,
        `Signed in to ${status.name}`,
        `Hearth is signed in to workspace ${status.workspace_id} as ${status.subject}. You can close this window.`,
      );
    } catch (failure) {
      if (!(failure instanceof HearthError)) request.log.error({ err: failure }, 'cloud sign-in failed');
      return callbackPage(reply, 400, 'Sign-in failed', failure instanceof HearthError ? failure.message : 'Sign-in failed; details are in the server log.');
    }
  });
};
