/** What `hearth serve` tells the person at the terminal once it listens: the sign-in, then what needs attention. */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { SIGN_IN_LINK_MINUTES } from '../access/admin-credential.js';
import { missingModelWarnings } from '../config/model-references.js';
import { rememberSecret } from '../redaction.js';
import { signInUrl } from '../http/admin-session.js';
import { command, invocation, installFolder, testModelCommand } from '../invocation.js';
import type { Services } from '../services.js';
import { defaultDataDirectory } from '../store/data-dir.js';
import { writeSignInFile, type OpenBrowser } from './browser.js';

/**
 * Signs the person in: opens their browser on a one-time sign-in (through the sign-in file), or,
 * when no browser is to be opened (`refusal`) or none could be, prints the one-time link to the
 * terminal. Started without one (a service manager, `nohup`, output sent to a file or a
 * container's log), it prints the command that makes a link instead: a live link in a log file
 * would sign in whoever can read the log.
 */
export async function announceSignIn(options: {
  services: Services;
  /** The server's loopback address. */
  local: string;
  stderr: NodeJS.WritableStream;
  /** Whether stderr is a terminal a person watches (only then is a live link printed). */
  terminal: boolean;
  refusal: string | undefined;
  openBrowser: OpenBrowser;
}): Promise<void> {
  const { services } = options;
  const link = services.admin.issueLink();
  // Any log line that would carry it shows [redacted] instead.
  rememberSecret(link.code);
  await presentSignIn({ ...options, dataDir: services.paths.root, url: signInUrl(new URL(options.local).host, link.code) });
}

/**
 * Opens the browser on a one-time sign-in link (`url`) through the data folder's sign-in file, or
 * prints the link (or, without a terminal, the command that makes one) when no browser is to be
 * opened or none could be: for a first start, and for a second one that finds Hearth running.
 */
export async function presentSignIn(options: {
  dataDir: string;
  /** The one-time sign-in link. */
  url: string;
  stderr: NodeJS.WritableStream;
  terminal: boolean;
  refusal: string | undefined;
  openBrowser: OpenBrowser;
}): Promise<void> {
  const { stderr, url } = options;
  const open = command('open', invocation(), { dir: options.dataDir, defaultDir: defaultDataDirectory() });
  const printLink = () =>
    stderr.write(
      options.terminal
        ? `Sign the app in on this machine (one-time link, valid ${SIGN_IN_LINK_MINUTES} minutes; ${open} makes another): ${url}\n`
        : `To sign the app in, run ${open} on this machine and open the link it prints.\n`,
    );
  if (options.refusal) {
    printLink();
    return;
  }
  const file = writeSignInFile(options.dataDir, url);
  const failed = () => {
    stderr.write('The browser could not be opened.\n');
    printLink();
  };
  try {
    await options.openBrowser(file, failed);
  } catch {
    rmSync(file, { force: true });
    failed();
    return;
  }
  stderr.write(`Opening Hearth in your browser, signed in. For another browser: ${open} prints a sign-in link.\n`);
}

/** Warnings at start: no app to serve, no model to run, and configuration that names models that are not there. */
export async function warnAtStart(services: Services, log: FastifyBaseLogger, webRoot: string): Promise<void> {
  if (!existsSync(join(webRoot, 'index.html'))) {
    log.warn(
      `The app is not built yet, so the address shows only a notice. In the Hearth folder (${installFolder()}), run: npm run build (npm start does it).`,
    );
  }
  const local = (await services.catalog.local()).map((model) => model.id);
  if (local.length === 0) log.warn(noModelsAdvice(services));
  for (const warning of missingModelWarnings(services.config as unknown as Record<string, unknown>, local)) log.warn(warning);
}

/** Every way to get a first model that works on this machine, one per line. */
export function noModelsAdvice(services: Pick<Services, 'paths' | 'catalog'>): string {
  const folder = invocation().folder ? '' : ` (in the Hearth folder, ${installFolder()})`;
  return [
    'No models yet. To get one:',
    '  - in the app, Models → Discover downloads one from Hugging Face',
    `  - copy a .gguf file into ${services.paths.models}`,
    services.catalog.externalSources
      ? '  - models LM Studio, Ollama, the Hugging Face cache or llama.cpp downloaded are listed automatically (none were found)'
      : '  - models of LM Studio, Ollama, the Hugging Face cache and llama.cpp are not listed: that is turned off',
    `  - a tiny test model that writes nonsense quickly${folder}: ${testModelCommand(services.paths.root, defaultDataDirectory())}`,
  ].join('\n');
}
