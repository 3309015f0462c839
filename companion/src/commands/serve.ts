import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { buildApp } from '../app.js';
import type { Restarter } from '../routes/contexts.js';
import { buildChannelApp } from '../channel-app.js';
import { OllamaListener } from '../ollama-app.js';
import { ConfigError } from '../config/document.js';
import { createServices, type Services } from '../services.js';
import { isLoopbackBind } from '../access/hosts.js';
import { command, installFolder, invocation, type DataDirChoice } from '../invocation.js';
import { createLogger } from '../log-format.js';
import { defaultDataDirectory } from '../store/data-dir.js';
import { DataDirectoryBusyError } from '../store/lock.js';
import { SecretsFileError } from '../store/secrets.js';
import { VERSION } from '../version.js';
import type { CommandContext } from './context.js';
import { browserRefusal, signInFile, systemBrowser } from './browser.js';
import { parseServeOptions, SERVE_USAGE, type ServeOptions } from './serve-options.js';
import { RESTART_EXIT_CODE, restartArguments, startedByRestart, stopWithSupervisor, superviseRestarts } from './restart.js';
import { restoreServerFiles, writeServerFile } from './server-file.js';
import { announceSignIn, presentSignIn, warnAtStart } from './start-up.js';
import { hearthAnswersAt, runningHearth } from './already-running.js';

export const usage = SERVE_USAGE;

// From the Hearth folder, not from this file: the companion may run compiled ahead from build/companion.
const WEB_ROOT = join(installFolder(), 'build', 'web');

/**
 * `hearth serve`: resolves when the server has stopped; the exit code is the result. Restarted from
 * the app (restart.ts), the process the terminal started supervises the fresh ones until the last stops.
 */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const options = parseServeOptions(argv, context.env);
  const restarted = startedByRestart(context.env);
  const bound: { port?: number } = {};
  const code = await serve(options, context, restarted, bound);
  if (code !== RESTART_EXIT_CODE || restarted) return code;
  return superviseRestarts(restartArguments(argv, options.port, bound.port), context.stderr);
}

/** Serves until stopped (0, or 1 when it could not start) or asked to restart (RESTART_EXIT_CODE); `bound` gets the port it listened on. */
async function serve(options: ServeOptions, context: CommandContext, restarted: boolean, bound: { port?: number }): Promise<number> {
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
    if (error instanceof DataDirectoryBusyError && !restarted) {
      const running = await runningHearth(options.dataDir);
      if (running) return openRunning(running, options, context);
    }
    if (error instanceof ConfigError || error instanceof DataDirectoryBusyError || error instanceof SecretsFileError) {
      context.stderr.write(`${error.message}\n`);
      return 1;
    }
    throw error;
  }
  const ollama = new OllamaListener();
  // When every listener is open: the app takes a later time on GET /admin/status as the restarted companion.
  const started: { at?: string } = {};
  const restart: Restarter = {
    url: () => restartUrl(app, options.port ?? services.config.server.port),
    begin: () => {
      context.stderr.write('Restarting Hearth (asked for in the app)…\n');
      exit.restart();
    },
    startedAt: () => started.at,
  };
  const app = await buildApp({ services, webRoot: WEB_ROOT, logger: log, ollamaListener: ollama, restart });
  const host = options.host ?? services.config.server.host;
  const port = options.port ?? services.config.server.port;
  const refusal = exposureRefusal(host, services.config.server.auth.required, services.keys.activeCount(), {
    dir: services.paths.root,
    defaultDir: defaultDataDirectory(),
  });
  if (refusal) {
    await services.close();
    context.stderr.write(`${refusal}\n`);
    return 1;
  }
  let channel: FastifyInstance | undefined;
  const signInPage = signInFile(services.paths.root);
  // Handlers go in before the address is printed: a script may signal as soon as it reads it.
  const exit = stopOnSignals(log, async () => {
    // Open streams end first (closing the apps stops generations and waits for their responses),
    // then models are released and the database is closed.
    await Promise.all([app.close(), channel?.close(), ollama.close()]);
    rmSync(services.paths.server, { force: true });
    rmSync(signInPage, { force: true });
    await services.close();
  });
  try {
    await quietly(log, () => app.listen({ host, port }));
  } catch (error) {
    exit.cancel();
    await services.close();
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE') {
      context.stderr.write(`Could not listen on ${host}:${port}: ${(error as Error).message}\n`);
      return 1;
    }
    // A Hearth on another data folder (the same folder was found running before this point).
    const there = addressOf(host, port);
    context.stderr.write(
      (await hearthAnswersAt(there))
        ? `Port ${port} on ${host} is already in use by another Hearth (${there}), one that runs on another data folder than ${options.dataDir}. Open that one, or start on a free port: ${portAdvice(context.env)}\n`
        : `Port ${port} on ${host} is already in use: another Hearth, or another program, is listening there. Stop it, or start on a free port: ${portAdvice(context.env)}\n`,
    );
    return 1;
  }
  try {
    channel = await openSecureChannel(services, log);
  } catch (error) {
    exit.cancel();
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
  // Refused (its port taken): the companion runs on without it, and the Server screen says why.
  await ollama.open(services, log);
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
  writeServerFile(services.paths, local);
  keepReachable(services, local, log);
  context.stdout.write(`Hearth listening on ${shown}\n`);
  bound.port = typeof address === 'object' && address ? address.port : undefined;
  started.at = new Date().toISOString();
  if (restarted) {
    stopWithSupervisor(() => exit.stop('supervisor gone'));
    context.stderr.write('Hearth started again; the open app reconnects by itself.\n');
  } else
    await announceSignIn({
      services,
      local,
      stderr: context.stderr,
      terminal: isTerminal(context.stderr),
      refusal: browserRefusal({ noBrowser: options.noBrowser, env: context.env, interactive: isTerminal(context.stdout) && isTerminal(context.stderr) }),
      openBrowser: context.openBrowser ?? systemBrowser(context.env),
    });
  await warnAtStart(services, log, WEB_ROOT);
  return exit.code;
}

/**
 * Started again on a data folder whose Hearth runs (a second `npm start`): says where it runs and
 * opens it signed in, as the first start did (or prints the link, under the same rules), and ends with 0.
 */
async function openRunning(running: { url: string; signIn: string }, options: ServeOptions, context: CommandContext): Promise<number> {
  context.stdout.write(`Hearth is already running at ${running.url}\n`);
  await presentSignIn({
    dataDir: options.dataDir,
    url: running.signIn,
    stderr: context.stderr,
    terminal: isTerminal(context.stderr),
    refusal: browserRefusal({ noBrowser: options.noBrowser, env: context.env, interactive: isTerminal(context.stdout) && isTerminal(context.stderr) }),
    openBrowser: context.openBrowser ?? systemBrowser(context.env),
  });
  return 0;
}

/** A data folder deleted or moved while the server runs gets back what the commands need to reach it (server-file.ts). */
function keepReachable(services: Services, local: string, log: FastifyBaseLogger): void {
  const restore = () => {
    try {
      restoreServerFiles(services.paths, local, services.admin.token);
    } catch (error) {
      log.warn({ err: error }, `Could not make ${services.paths.root} again for the commands that reach this server.`);
    }
  };
  services.dataFolder.events.on('gone', restore);
  if (services.dataFolder.gone) restore();
}

/** Where a listener on `host` and `port` is reached from this machine (a wildcard bind through loopback). */
function addressOf(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '');
  const reached = ['0.0.0.0', '::', ''].includes(bare) ? '127.0.0.1' : bare;
  return `http://${reached.includes(':') ? `[${reached}]` : reached}:${port}`;
}

/** Whether a stream is a terminal a person watches. */
function isTerminal(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/** How to start on a free port, in the form the person used: `npm start -- --port 0` or `hearth serve --port 0`. */
function portAdvice(env: NodeJS.ProcessEnv): string {
  if (env.npm_lifecycle_event === 'start') return 'npm start -- --port 0 (or another port).';
  return `${command('serve --port 0')} (or another port).`;
}

/**
 * Fastify announces the address at info level; Hearth prints it once itself (stdout), so the
 * announcement is left out unless the level asks for more than info.
 */
async function quietly<T>(log: FastifyBaseLogger, work: () => Promise<T>): Promise<T> {
  const level = log.level;
  if (level !== 'info') return work();
  log.level = 'warn';
  try {
    return await work();
  } finally {
    log.level = level;
  }
}

/**
 * SIGINT and SIGTERM stop the server once, gracefully. A terminal's Ctrl+C reaches every process
 * of its group, and npm passes it on as well, so the same signal may arrive more than once within
 * moments: repeats are ignored while the server stops. One that comes later, once stopping has
 * taken a while, is a person insisting: the process ends at once.
 */
function stopOnSignals(
  log: FastifyBaseLogger,
  stop: () => Promise<void>,
): { code: Promise<number>; cancel(): void; stop(reason: string): void; restart(): void } {
  let stopping: number | undefined;
  let resolveCode: (code: number) => void = () => undefined;
  const code = new Promise<number>((resolve) => (resolveCode = resolve));
  /** Stops once, as a signal does; the code says whether a fresh server follows (restart.ts). */
  const begin = (reason: string, then: number) => {
    if (stopping !== undefined) return;
    stopping = Date.now();
    log.info({ signal: reason }, 'stopping');
    stop().then(
      () => finish(then),
      (error: unknown) => {
        log.error({ err: error }, 'stopping failed');
        finish(1);
      },
    );
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping === undefined) begin(signal, 0);
    else if (Date.now() - stopping > INSIST_AFTER_MS) {
      process.stderr.write('Stopping at once, without waiting for the shutdown to finish.\n');
      process.exit(130);
    }
  };
  const finish = (result: number) => {
    cancel();
    resolveCode(result);
  };
  const cancel = () => {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return { code, cancel, stop: (reason) => begin(reason, 0), restart: () => begin('restart', RESTART_EXIT_CODE) };
}

/** Where the restarted companion answers: this loopback address, on `port` (0: the one chosen at start, which it keeps). */
function restartUrl(app: FastifyInstance, port: number): string {
  const address = app.server.address();
  if (typeof address !== 'object' || !address) return '';
  const wildcard = ['0.0.0.0', '::'].includes(address.address);
  const host = wildcard ? (address.address === '::' ? '[::1]' : '127.0.0.1') : address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${port === 0 ? address.port : port}`;
}

/** A repeated signal this long after the first is a person asking again, not a copy of the first. */
const INSIST_AFTER_MS = 3000;

/** The second listener (server.remote): TLS 1.3 with client certificates, for paired devices. */
async function openSecureChannel(services: Services, log: FastifyBaseLogger): Promise<FastifyInstance | undefined> {
  const settings = services.config.server.remote;
  if (!settings.enabled) return undefined;
  const tls = await services.channel.prepare();
  const channelApp = await buildChannelApp({ services, tls, logger: log });
  try {
    await channelApp.listen({ host: settings.host, port: settings.port });
  } catch (error) {
    await channelApp.close();
    throw error;
  }
  const address = channelApp.server.address();
  services.channel.listening(typeof address === 'object' && address ? { host: address.address, port: address.port } : undefined);
  const status = services.channel.status();
  log.info({ url: status.url, fingerprint: status.fingerprint }, 'secure channel listening (TLS 1.3, paired devices only)');
  return channelApp;
}

/** Listening beyond loopback is a deliberate choice: it needs auth on and a key to use. */
export function exposureRefusal(host: string, authRequired: boolean, activeKeys: number, dataDir?: DataDirChoice): string | undefined {
  if (isLoopbackBind(host)) return undefined;
  const create = command('keys create --label NAME', invocation(), dataDir);
  if (!authRequired) {
    return `Refusing to listen on ${host}: that is reachable from other machines, and access keys are not required. Set server.auth.required: true in config.yaml and create a key (${create}) first.`;
  }
  if (activeKeys === 0) return `Refusing to listen on ${host}: access keys are required but none exists yet. Create one with: ${create}`;
  return undefined;
}
