import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { LoggingMessageNotification, Progress, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { McpServiceSettings } from '#shared/api/config.js';
import type { ConnectionSecrets } from './credentials.js';
import { listAllTools } from './discovery.js';
import { ConnectFailure } from './failures.js';
import { openHttp } from './http-transport.js';
import { closeSession, type Attempt, type Session } from './session.js';
import { loadSdk, sdk } from './sdk.js';
import { ProcessTransport } from './stdio-transport.js';

/** What the client of one attempt hears from its service, for the connection to act on. */
export interface SessionEvents {
  /** The service's tool list changed (list_changed). */
  toolsChanged(): void;
  /** Its resources or prompts changed. */
  listChanged(kind: 'resources' | 'prompts'): void;
  /** Progress of a call, by the token Hearth sent with it. */
  progress(token: string, progress: Progress): void;
  /** A log message (notifications/message), as the service sent it. */
  logged(message: LoggingMessageNotification['params']): void;
  /** The connection ended. */
  closed(): void;
}

export interface OpenOptions {
  settings: McpServiceSettings;
  /** Hearth's version, sent in the handshake. */
  version: string;
  secrets: ConnectionSecrets;
  /** Every transport opened is registered here, so a timeout can end it. */
  attempt: Attempt;
  events: SessionEvents;
}

/**
 * Opens a session with a service (its process over stdio, or HTTP with its authentication),
 * completes the handshake and reads its whole tool list. A service that declares no tools is
 * refused (zero_tools); whatever fails closes the session.
 */
export async function openSession(options: OpenOptions): Promise<{ session: Session; tools: Tool[] }> {
  options.secrets.reset();
  await loadSdk();
  const session = options.settings.transport === 'stdio' ? await openProcess(options) : await openHttpSession(options);
  const capabilities = session.client.getServerCapabilities();
  if (!capabilities?.tools) {
    await closeSession(session);
    throw new ConnectFailure('zero_tools', 'The service offers no tools (it does not declare the tools capability).');
  }
  try {
    return { session, tools: await listAllTools(session.client, options.settings.discovery_timeout_ms) };
  } catch (error) {
    await closeSession(session);
    throw error;
  }
}

async function openProcess({ settings, secrets, attempt, ...rest }: OpenOptions): Promise<Session> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(settings.env)) env[key] = secrets.resolve(value, `env.${key}`);
  const transport = attempt.add(
    new ProcessTransport({ command: settings.command!, args: settings.args, env, cwd: settings.cwd, redact: (text) => secrets.clean(text) }),
  );
  const client = newClient(rest);
  await client.connect(transport);
  return { client, transport, protocol: 'stdio' };
}

async function openHttpSession({ settings, secrets, attempt, ...rest }: OpenOptions): Promise<Session> {
  const auth = settings.auth;
  const headers: Record<string, string> = {};
  if (auth.type === 'token') headers.Authorization = `Bearer ${secrets.resolve(auth.token, 'auth.token')}`;
  if (auth.type === 'headers') for (const [name, reference] of Object.entries(auth.headers)) headers[name] = secrets.resolve(reference, `auth.headers.${name}`);
  const authProvider = auth.type === 'oauth' ? secrets.signIn(settings) : undefined;
  return openHttp(new URL(settings.url!), {
    headers,
    authProvider,
    newClient: () => newClient(rest),
    track: (transport) => attempt.add(transport),
  });
}

function newClient({ version, events }: Pick<OpenOptions, 'version' | 'events'>): Client {
  const { Client, LoggingMessageNotificationSchema, ProgressNotificationSchema } = sdk();
  const client = new Client(
    { name: 'hearth', version },
    {
      capabilities: {},
      listChanged: {
        tools: { autoRefresh: false, debounceMs: 100, onChanged: () => events.toolsChanged() },
        resources: { autoRefresh: false, debounceMs: 100, onChanged: () => events.listChanged('resources') },
        prompts: { autoRefresh: false, debounceMs: 100, onChanged: () => events.listChanged('prompts') },
      },
    },
  );
  client.setNotificationHandler(ProgressNotificationSchema, (notification) => {
    const { progressToken, ...progress } = notification.params;
    events.progress(String(progressToken), progress);
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => events.logged(notification.params));
  client.onclose = () => events.closed();
  // Errors surface through the request that failed or the close; nothing to do per error.
  client.onerror = () => undefined;
  return client;
}
