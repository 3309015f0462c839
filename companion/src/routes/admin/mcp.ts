import { HearthError } from '../../errors.js';
import { callbackPage } from '../../http/callback-page.js';
import { OAUTH_CALLBACK_PATH } from '../../mcp/oauth.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { McpLoginStart, McpServiceList, McpServiceStatus } from '#shared/api/bridge.js';
import { pathParams, shortName } from '../schema.js';

export const nameParams = pathParams({ name: shortName });

/** Loopback-only state of the MCP services, reconnects, and OAuth sign-in with its redirect route. */
export const mcpAdminRoutes: RoutePlugin<AdminContext, 'mcp'> = async (app, { mcp }) => {
  app.get('/admin/mcp/services', async (): Promise<McpServiceList> => ({ services: mcp.status() }));

  app.get<{ Params: { name: string } }>('/admin/mcp/services/:name', { schema: { params: nameParams } }, async (request): Promise<McpServiceStatus> =>
    mcp.serviceStatus(request.params.name),
  );

  app.post<{ Params: { name: string } }>(
    '/admin/mcp/services/:name/reconnect',
    { schema: { params: nameParams } },
    async (request): Promise<McpServiceStatus> => mcp.reconnect(request.params.name),
  );

  // The redirect comes back to the address the owner is using now (the perimeter has checked it is loopback).
  app.post<{ Params: { name: string } }>('/admin/mcp/services/:name/login', { schema: { params: nameParams } }, async (request): Promise<McpLoginStart> => {
    const host = request.headers.host;
    if (!host) throw new HearthError('invalid_request_error', 'A Host header is required to build the sign-in redirect.');
    return mcp.beginLogin(request.params.name, `http://${host}${OAUTH_CALLBACK_PATH}`);
  });

  // The authorization server redirects the browser here: the state it carries is the proof, not the admin credential.
  app.get<{ Querystring: { code?: string; state?: string; error?: string; error_description?: string } }>(
    OAUTH_CALLBACK_PATH,
    { config: { adminCredential: false } },
    async (request, reply) => {
      const { code, state, error, error_description: description } = request.query;
      const page = (status: number, title: string, text: string) => callbackPage(reply, status, title, text);
      if (error) return page(400, 'Sign-in was not completed', `The authorization server answered: ${error}${description ? ` (${description})` : ''}.`);
      if (!code || !state) return page(400, 'Sign-in was not completed', 'The redirect carries no code or state.');
      try {
        const status = await mcp.finishLogin(state, code);
        const connected = status.state === 'connected';
        return page(
          200,
          connected ? `Signed in to ${status.name}` : `Signed in; ${status.name} is ${status.state}`,
          connected ? 'Hearth is connected to the service. You can close this window.' : (status.message ?? 'See hearth mcp status.'),
        );
      } catch (failure) {
        const message = failure instanceof HearthError ? failure.message : 'Sign-in failed; details are in the server log.';
        if (!(failure instanceof HearthError)) request.log.error({ err: failure }, 'OAuth sign-in failed');
        return page(400, 'Sign-in failed', message);
      }
    },
  );
};
