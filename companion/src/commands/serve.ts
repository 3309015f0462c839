import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import { buildRemoteApp } from '../remote-app.js';
import { ConfigError } from '../config/document.js';
import { createServices, type Services } from '../services.js';
import { SIGN_IN_LINK_MINUTES } from '../access/admin-credential.js';
import { isLoopbackBind } from '../access/hosts.js';
import { signInUrl } from '../http/admin-session.js';
import { createLogger } from '../log-format.js';
import { writeFileAtomic } from '../store/files.js';
import { DataDirectoryBusyError } from '../store/lock.js';
import { SecretsFileError } from '../store/secrets.js';
import { VERSION } from '../version.js';
import type { CommandContext } from './context.js';
import { parseServeOptions, SERVE_USAGE } from './serve-options.js';

export const usage = SERVE_USAGE;

const WEB_ROOT = fileURLToPath(new URL('../../../build/web', import.meta.url));

/** `hearth serve`: resolves when the server has stopped; the exit code is the result. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const options = parseServeOptions(argv, context.env);
  // Logs go to stderr: stdout carries exactly one line, the address, for scripts to read.
  const log = createLogger({ level: context.env.HEARTH_LOG_LEVEL, format: context.env.HEARTH_LOG_FORMAT }, context.stderr);
  let services;
  try {
    services = await createServices({
      dataDir: options.dataDir,
      modelsDirs: options.modelsDirs,
      externalSources: options.externalSources,
      engine: options.engine,
      log,
      version: VERSION,
    });
  } catch (error) {
    if (error instanceof ConfigError || error instanceof DataDirectoryBusyError || error instanceof SecretsFileError) {
      context.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const app = await buildApp({ services, webRoot: WEB_ROOT, logger: log });
  const host = options.host ?? services.config.server.host;
  const port = options.port ?? services.config.server.port;
  const refusal = exposureRefusal(host, services.config.server.auth.required, services.keys.activeCount());
  if (refusal) {
    await services.close();
    context.stderr.write(`${refusal}\n`);
    return 1;
  }
  let channel: FastifyInstance | undefined;
  // Handlers go in before the address is printed: a script may signal as soon as it reads it.
  let stopping: Promise<void> | undefined;
  let stopped: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolveExit) => (stopped = resolveExit));
  const stop = (signal: string) => {
    stopping ??= (async () => {
      log.info({ signal }, 'stopping');
      // Open streams end first (closing the apps stops generations and waits for their responses),
      // then models are released and the database is closed.
      await Promise.all([app.close(), channel?.close()]);
      rmSync(services.paths.server, { force: true });
      await services.close();
      stopped(0);
    })();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  try {
    await app.listen({ host, port });
  } catch (error) {
    await services.close();
    const code = (error as NodeJS.ErrnoException).code;
    context.stderr.write(
      code === 'EADDRINUSE'
        ? `Port ${port} on ${host} is already in use. Start with --port 0 for a free port, or stop the other program.\n`
        : `Could not listen on ${host}:${port}: ${(error as Error).message}\n`,
    );
    return 1;
  }
  try {
    channel = await openSecureChannel(services, log);
  } catch (error) {
    await Promise.all([app.close(), services.close()]);
    const remote = services.config.server.remote;
    const code = (error as NodeJS.ErrnoException).code;
    context.stderr.write(
      code === 'EADDRINUSE'
        ? `The secure channel's port ${remote.port} on ${remote.host} is already in use. Change server.remote.port, or stop the other program.\n`
        : `Could not open the secure channel on ${remote.host}:${remote.port}: ${(error as Error).message}\n`,
    );
    return 1;
  }
  const address = app.server.address();
  const shown =
    typeof address === 'object' && address
      ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
      : `http://${host}:${port}`;
  // The CLI talks to admin routes, which need a loopback Host: a wildcard bind is reached through loopback.
  const local =
    typeof address === 'object' && address && ['0.0.0.0', '::'].includes(address.address)
      ? `http://${address.address === '::' ? '[::1]' : '127.0.0.1'}:${address.port}`
      : shown;
  writeFileAtomic(services.paths.server, JSON.stringify({ pid: process.pid, url: local }), 0o600);
  context.stdout.write(`Hearth listening on ${shown}\n`);
  // The app's admin screens need a sign-in; the link is for the person at this terminal only.
  const link = services.admin.issueLink();
  context.stderr.write(
    `Sign the app in on this machine (one-time link, valid ${SIGN_IN_LINK_MINUTES} minutes; \`hearth open\` makes another): ${signInUrl(new URL(local).host, link.code)}\n`,
  );
  if ((await services.catalog.local()).length === 0) {
    log.warn(`No models found. Copy a .gguf file into ${services.paths.models}, pass --models-dir DIR, or run: hearth pull <huggingface-repo>`);
  }
  return exit;
}

/** The second listener (server.remote): TLS 1.3 with client certificates, for paired devices. */
async function openSecureChannel(services: Services, log: FastifyBaseLogger): Promise<FastifyInstance | undefined> {
  const settings = services.config.server.remote;
  if (!settings.enabled) return undefined;
  const tls = await services.channel.prepare();
  const remote = await buildRemoteApp({ services, tls, logger: log });
  try {
    await remote.listen({ host: settings.host, port: settings.port });
  } catch (error) {
    await remote.close();
    throw error;
  }
  const address = remote.server.address();
  services.channel.listening(typeof address === 'object' && address ? { host: address.address, port: address.port } : undefined);
  const status = services.channel.status();
  log.info({ url: status.url, fingerprint: status.fingerprint }, 'secure channel listening (TLS 1.3, paired devices only)');
  return remote;
}

/** Listening beyond loopback is a deliberate choice: it needs auth on and a key to use. */
export function exposureRefusal(host: string, authRequired: boolean, activeKeys: number): string | undefined {
  if (isLoopbackBind(host)) return undefined;
  if (!authRequired) {
    return `Refusing to listen on ${host}: that is reachable from other machines, and access keys are not required. Set server.auth.required: true in config.yaml and create a key (hearth keys create --label NAME) first.`;
  }
  if (activeKeys === 0) return `Refusing to listen on ${host}: access keys are required but none exists yet. Create one with: hearth keys create --label NAME`;
  return undefined;
}
