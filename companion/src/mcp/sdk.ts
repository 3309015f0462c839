/**
 * The MCP SDK, loaded on first use. Its modules build their zod schemas as they load, about a
 * sixth of a second of CPU at every start of the companion, though a companion with no MCP service
 * and no MCP client never needs them. `loadSdk()` loads the parts Hearth uses, once; `sdk()` reads
 * them where an MCP session, server or transport already exists (so they were loaded);
 * `loadedSdk()` is for telling the SDK's errors apart: none can exist before it loaded.
 */
import type * as ClientAuth from '@modelcontextprotocol/sdk/client/auth.js';
import type * as ClientIndex from '@modelcontextprotocol/sdk/client/index.js';
import type * as ClientSse from '@modelcontextprotocol/sdk/client/sse.js';
import type * as ClientStdio from '@modelcontextprotocol/sdk/client/stdio.js';
import type * as ClientStreamable from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type * as ServerAuthErrors from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type * as ServerIndex from '@modelcontextprotocol/sdk/server/index.js';
import type * as ServerStreamable from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type * as SharedStdio from '@modelcontextprotocol/sdk/shared/stdio.js';
import type * as Types from '@modelcontextprotocol/sdk/types.js';
import { onFirstUse } from '../first-use.js';

export type McpSdk = typeof ClientAuth &
  typeof ClientIndex &
  typeof ClientSse &
  Pick<typeof ClientStdio, 'getDefaultEnvironment'> &
  typeof ClientStreamable &
  typeof ServerAuthErrors &
  typeof ServerIndex &
  typeof ServerStreamable &
  typeof SharedStdio &
  typeof Types;

const mcpSdk = onFirstUse<McpSdk>(async () => {
  const [auth, client, sse, stdio, streamable, authErrors, server, serverStreamable, sharedStdio, types] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/auth.js'),
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/sse.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/auth/errors.js'),
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/shared/stdio.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  return {
    ...auth,
    ...client,
    ...sse,
    getDefaultEnvironment: stdio.getDefaultEnvironment,
    ...streamable,
    ...authErrors,
    ...server,
    ...serverStreamable,
    ...sharedStdio,
    ...types,
  };
});

export function loadSdk(): Promise<McpSdk> {
  return mcpSdk.load();
}

export function sdk(): McpSdk {
  const loaded = mcpSdk.loaded();
  if (!loaded) throw new Error('The MCP SDK is used before it was loaded: await loadSdk() first');
  return loaded;
}

export function loadedSdk(): McpSdk | undefined {
  return mcpSdk.loaded();
}
