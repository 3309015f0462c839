/**
 * How the person at this machine runs Hearth's commands, so that every command Hearth prints
 * works as written. `npm install` in a clone puts no `hearth` on the PATH (and `npx hearth`
 * outside the clone would fetch an unrelated npm package), so Hearth's own text names its
 * commands as `hearth <command>` and everything shown to a person goes through `spellCommands`:
 *
 * - `hearth open` when the first `hearth` on the PATH is this installation (after `npm link` or
 *   `npm install -g .` in the clone): it works from any folder;
 * - otherwise `npm run hearth -- open`, which works in the Hearth folder (`folder`).
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Invocation {
  /** What stands before a subcommand: `hearth` or `npm run hearth --`. */
  command: string;
  /** How Hearth itself is started: `hearth` or `npm start`. */
  start: string;
  /** The Hearth folder, where the npm forms must be run; undefined when `hearth` is installed. */
  folder?: string;
}

/**
 * The subcommands (docs/cli.md); `COMMAND` is the placeholder in usage text. A
 * mention followed by a colon is a message's label (`hearth pull: cancelled`), not an instruction.
 */
const SUBCOMMANDS = ['serve', 'pull', 'keys', 'secret', 'config', 'mcp', 'devices', 'remote', 'cloud', 'open', 'engine', 'COMMAND'];
const MENTION = new RegExp(`\\bhearth (?=(?:${SUBCOMMANDS.join('|')})\\b(?!:)|--(?:help|version)\\b)`, 'g');

/** The repository (or installed package) folder: the one holding bin/hearth.js above this file. */
export function installFolder(from = dirname(fileURLToPath(import.meta.url))): string {
  let folder = from;
  while (!existsSync(join(folder, 'bin', 'hearth.js')) || !existsSync(join(folder, 'package.json'))) {
    const parent = dirname(folder);
    if (parent === folder) return from;
    folder = parent;
  }
  return folder;
}

/** Decides from the PATH: `hearth` counts only when the first one found is this installation's. */
export function detectInvocation(env: NodeJS.ProcessEnv = process.env, folder = installFolder(), platform = process.platform): Invocation {
  if (installedHere(env, folder, platform)) return { command: 'hearth', start: 'hearth' };
  return { command: 'npm run hearth --', start: 'npm start', folder };
}

function installedHere(env: NodeJS.ProcessEnv, folder: string, platform: NodeJS.Platform): boolean {
  const ours = realFile(join(folder, 'bin', 'hearth.js'));
  if (!ours) return false;
  for (const dir of (env.PATH ?? env.Path ?? '').split(delimiter)) {
    if (!dir) continue;
    if (platform !== 'win32') {
      if (existsSync(join(dir, 'hearth'))) return realFile(join(dir, 'hearth')) === ours;
      continue;
    }
    // npm's Windows shims are scripts beside the global node_modules, not links.
    if (existsSync(join(dir, 'hearth.cmd'))) return realFile(join(dir, 'node_modules', 'hearth', 'bin', 'hearth.js')) === ours;
  }
  return false;
}

function realFile(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

let current: Invocation | undefined;

/** This process's invocation, decided once from its PATH. */
export function invocation(): Invocation {
  current ??= detectInvocation();
  return current;
}

/** For tests and the CLI entry: decides the invocation from these settings instead. */
export function useInvocation(next: Invocation): void {
  current = next;
}

/** The data folder a printed command must reach, and the one a command reaches without being told. */
export interface DataDirChoice {
  dir: string;
  defaultDir: string;
}

/**
 * `hearth open` as this installation runs it: `hearth open` or `npm run hearth -- open`, with
 * `--data-dir DIR` when the server's data folder is not the default one (else the command would
 * look for a server, or make a key, in the default folder).
 */
export function command(subcommand: string, spelled: Invocation = invocation(), dataDir?: DataDirChoice): string {
  return `${spelled.command} ${subcommand}${dataDirArgument(dataDir)}`;
}

function dataDirArgument(choice: DataDirChoice | undefined): string {
  return choice && choice.dir !== choice.defaultDir ? ` --data-dir ${shellWord(choice.dir)}` : '';
}

/** Rewrites every `hearth <subcommand>` in a text for people into the form that runs here. */
export function spellCommands(text: string, spelled: Invocation = invocation()): string {
  if (spelled.command === 'hearth') return text;
  return text.replace(MENTION, `${spelled.command} `);
}

/** Where a printed command must be run, for a person who may not be in that folder: "" when anywhere. */
export function whereToRun(spelled: Invocation = invocation()): string {
  return spelled.folder ? ` in the Hearth folder (${spelled.folder})` : '';
}

/**
 * The command that writes a small test model where a server on `dataDir` finds it. It is an npm
 * script of the Hearth folder, so it runs there whatever the invocation.
 */
export function testModelCommand(dataDir: string, defaultDataDir: string): string {
  const argument = dataDirArgument({ dir: dataDir, defaultDir: defaultDataDir });
  return `npm run model:tiny${argument ? ` --${argument}` : ''}`;
}

/** A path as one shell word: quoted only when it needs to be. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}
