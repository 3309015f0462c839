import { VERSION } from './version.js';
import { helpHint, UsageError, wantsHelp } from './commands/arguments.js';
import type { Command } from './commands/context.js';
import { spellCommands } from './invocation.js';

const USAGE = `Hearth ${VERSION}: a local AI companion.

Usage:
  hearth serve [--host H] [--port P] [--data-dir DIR] [--models-dir DIR ...]   start the companion (default)
  hearth pull <huggingface-repo[:QUANT] | owner/repo/file.gguf | URL>         download a GGUF model
  hearth keys create|list|revoke                                               access keys
  hearth secret set|list|delete                                                secret values (secret:NAME)
  hearth config export|plan|apply [FILE] [--prune] [--yes]                     configuration of the running server
  hearth mcp status|reconnect|login [NAME]                                      MCP tool services of the running server
  hearth devices pair|list|revoke                                              devices paired with this host (secure channel)
  hearth remote add|list|remove                                                hosts this companion is paired with
  hearth cloud list|login|logout|agents [NAME]                                 cloud workspaces: sign-in and published agents
  hearth open                                                                  a one-time link that signs the app in
  hearth engine build|status                                                   the llama-server engine's build
  hearth --version | --help

Run "hearth COMMAND --help" for a command's options.`;

/**
 * Standard error with every `hearth <command>` in a message spelled the way it runs here
 * (invocation.ts). Writes stay synchronous, as process.stderr's are, so nothing is lost at exit.
 */
const stderr = {
  write: (chunk: string | Uint8Array, ...rest: unknown[]) =>
    (process.stderr.write as (chunk: string, ...rest: unknown[]) => boolean)(
      spellCommands(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString()),
      ...rest,
    ),
  get isTTY() {
    return process.stderr.isTTY;
  },
  get fd() {
    return process.stderr.fd;
  },
} as unknown as NodeJS.WritableStream;

const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: () => import('./commands/serve.js'),
  pull: () => import('./commands/pull.js'),
  keys: () => import('./commands/keys.js'),
  secret: () => import('./commands/secret.js'),
  config: () => import('./commands/config.js'),
  mcp: () => import('./commands/mcp.js'),
  devices: () => import('./commands/devices.js'),
  remote: () => import('./commands/remote.js'),
  cloud: () => import('./commands/cloud.js'),
  open: () => import('./commands/open.js'),
  engine: () => import('./commands/engine.js'),
};

export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  if (first === '--version' || first === '-v') {
    process.stdout.write(`${VERSION}\n`);
    return 0;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    process.stdout.write(`${spellCommands(USAGE)}\n`);
    return 0;
  }
  const name = first === undefined || first.startsWith('-') ? 'serve' : first;
  const args = name === first ? rest : argv;
  const load = COMMANDS[name];
  if (!load) {
    stderr.write(`Unknown command "${name}".\n${helpHint()}\n`);
    return 2;
  }
  if (wantsHelp(args)) {
    // serve's usage lives apart from the server code, so `hearth serve --help` loads nothing heavy.
    const usage = name === 'serve' ? (await import('./commands/serve-options.js')).SERVE_USAGE : (await load()).usage;
    process.stdout.write(`${spellCommands(usage.trimEnd())}\n`);
    return 0;
  }
  const env = process.env;
  const dataDir = env.HEARTH_DATA_DIR;
  try {
    // A serve command line is checked before the server's code loads (seconds on a busy machine), so a mistake is answered at once.
    if (name === 'serve') (await import('./commands/serve-options.js')).parseServeOptions(args, env);
    const command = await load();
    return await command.run(args, { stdout: process.stdout, stderr, stdin: process.stdin, env, modelsDir: await modelsDirFor(dataDir) });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The cause and what to do, not the whole usage. The label stays the program's name; the rest is spelled as it runs here.
    process.stderr.write(`hearth ${name}: ${spellCommands(error.message)}\n${spellCommands(error.hint ?? helpHint(name))}\n`);
    return 2;
  }
}

async function modelsDirFor(dataDir: string | undefined): Promise<string> {
  const { dataPaths, defaultDataDirectory } = await import('./store/data-dir.js');
  return dataPaths(dataDir ?? defaultDataDirectory()).models;
}
