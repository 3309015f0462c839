import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync, symlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, HEARTH_BIN, REPO_ROOT, runNode, type Finished } from '../helpers/hearth-process.js';
import { startServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';

/*
 * Every command Hearth prints works as written from where the person is. A clone's `npm install`
 * puts no `hearth` on the PATH, so there every instruction reads `npm run hearth -- …` (run in the
 * clone); after `npm link` (or `npm install -g .`) it reads `hearth …`. Each printed command is
 * run here with --help. `npx hearth` (which outside the clone fetches an unrelated npm package)
 * is never suggested.
 */

const COMMANDS = ['serve', 'pull', 'keys', 'secret', 'config', 'mcp', 'devices', 'remote', 'cloud', 'open', 'engine'];
const dataDir = tempFolder('cli');
const env = cleanEnv({ HEARTH_DATA_DIR: dataDir });
const hearth = (...args: string[]) => runNode(HEARTH_BIN, args, { env });

/** A folder with `hearth` linked to this clone's bin/hearth.js, as `npm link` makes one, first on the PATH. */
function linkedPath(): string {
  const bin = tempFolder('bin');
  symlinkSync(join(REPO_ROOT, 'bin', 'hearth.js'), join(bin, 'hearth'));
  return `${bin}${delimiter}${process.env.PATH ?? ''}`;
}

/** Runs a command line as a person types it (no shell features needed), in `cwd`. */
function runCommand(line: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Finished> {
  const [program, ...args] = line.split(' ');
  const child = spawn(program!, args, { cwd: options.cwd ?? REPO_ROOT, env: options.env ?? env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** The commands a text names: `npm run hearth -- sub [action]`, `hearth sub [action]`, `npm run model:tiny`, in order, once each. */
function commandsIn(text: string): string[] {
  const found = [
    ...text.matchAll(
      /(?:npm run (?:-s )?hearth -- |(?<![\w/-])hearth )(serve|pull|keys|secret|config|mcp|devices|remote|cloud|open|engine)(?: (create|list|revoke|set|delete|export|plan|apply|status|reconnect|login|logout|agents|pair|add|remove|build)\b)?/g,
    ),
  ].map((match) => match[0]);
  for (const match of text.matchAll(/npm run model:tiny(?: -- --data-dir [^\s"\\]+)?/g)) found.push(match[0]);
  return [...new Set(found)];
}

/**
 * Runs `check` on every item, a few at a time: each is a separate process that spends most of
 * its life starting Node (and npm), so they overlap on a machine's cores. Every check still runs.
 */
async function eachAtOnce<T>(items: readonly T[], check: (item: T) => Promise<void>, atOnce = 3): Promise<void> {
  const queue = [...items];
  const worker = async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await check(item);
  };
  await Promise.all(Array.from({ length: Math.min(atOnce, queue.length) }, worker));
}

/** What `npm link` gives: `hearth` on the PATH, run from a folder outside the clone. */
const LINKED = { ...env, PATH: linkedPath() };
const ELSEWHERE = tempFolder('elsewhere');

/**
 * Each `<command> --help` run once per file for the same folder and PATH: the help, the start-up
 * lines and the docs name many of the same commands, and the same command line in the same place
 * answers the same. Every test still checks each command it names.
 */
const helpRuns = new Map<string, Promise<Finished>>();

/** `<command> --help` exits 0 with a usage on stdout. */
async function expectHelp(line: string, options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<void> {
  const run = { cwd: options.cwd ?? REPO_ROOT, env: options.env ?? env };
  const key = JSON.stringify([line, run.cwd, run.env.PATH]);
  if (!helpRuns.has(key)) helpRuns.set(key, runCommand(`${line} --help`, run));
  const result = await helpRuns.get(key)!;
  expect(result.code, `${line} --help\n${result.stderr}`).toBe(0);
  expect(result.stdout, line).toMatch(/Usage:/);
}

describe('hearth COMMAND --help', () => {
  it.each(COMMANDS)('hearth %s --help prints its usage, spelled as it runs from the clone, and exits 0', async (command) => {
    await eachAtOnce(['--help', '-h'], async (flag) => {
      const result = await hearth(command, flag);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage:/);
      expect(result.stdout).toContain(`npm run hearth -- ${command}`);
    });
  });

  it('--help after an action still answers with the usage, and does nothing else', async () => {
    const result = await hearth('keys', 'create', '--label', 'x', '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage:\n {2}npm run hearth -- keys create/);
    expect((await hearth('keys', 'list')).stdout).toMatch(/No access keys/);
  });

  it('hearth --help names every command and how to get its options', async () => {
    const result = await hearth('--help');
    expect(result.code).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toContain(`npm run hearth -- ${command}`);
    expect(result.stdout).toContain('npm run hearth -- COMMAND --help');
    expect(result.stdout).not.toMatch(/(^|\s)hearth (serve|open|keys)/m);
  });

  it('the command block of docs/cli.md lists every command', () => {
    const page = readFileSync(join(REPO_ROOT, 'docs', 'cli.md'), 'utf8');
    const block = /^# The `hearth` command\n[\s\S]*?```\n([\s\S]*?)```/m.exec(page)?.[1] ?? '';
    for (const command of COMMANDS) expect(block).toMatch(new RegExp(`^hearth ${command} `, 'm'));
  });
});

describe('every printed command runs as written', () => {
  it('in the clone: each command the help names runs through npm run hearth --', async () => {
    const commands = commandsIn((await hearth('--help')).stdout);
    expect(commands.length).toBeGreaterThanOrEqual(COMMANDS.length);
    await eachAtOnce(commands, (line) => expectHelp(line));
  }, 180_000);

  it('installed with npm link: the help and the start-up lines say hearth, and those commands run from any folder', async () => {
    const { PATH } = LINKED;
    const help = await runCommand('hearth --help', { env: LINKED, cwd: ELSEWHERE });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain('hearth keys create|list|revoke');
    expect(help.stdout).toContain('Run "hearth COMMAND --help"');
    expect(help.stdout).not.toContain('npm run');
    await eachAtOnce(
      commandsIn(help.stdout).filter((line) => line.startsWith('hearth ')),
      (line) => expectHelp(line, { env: LINKED, cwd: ELSEWHERE }),
    );

    const server = await startServer({ withModel: false, env: { PATH } });
    try {
      await expect.poll(() => server.stderr(), { timeout: 30_000 }).toMatch(/No models yet/);
      const startUp = server.stderr();
      expect(startUp).toContain(`To sign the app in, run hearth open --data-dir ${server.dataDir} on this machine`);
      expect(startUp).not.toContain('npm run hearth');
      await eachAtOnce(
        commandsIn(startUp).filter((line) => line.startsWith('hearth ')),
        (line) => expectHelp(line, { env: LINKED, cwd: ELSEWHERE }),
      );
    } finally {
      await server.stop();
    }
  }, 180_000);

  it('the start-up lines of a clone name npm run hearth -- open and npm run model:tiny with its data folder, and they run in the clone', async () => {
    const server = await startServer({ withModel: false });
    let startUp: string;
    let opened: Finished;
    const open = `npm run hearth -- open --data-dir ${server.dataDir}`;
    try {
      await expect.poll(() => server.stderr(), { timeout: 30_000 }).toMatch(/No models yet/);
      startUp = server.stderr();
      // Run as printed, while the server runs: it finds this server (not one in the default folder) and makes a link.
      expect(startUp).toContain(open);
      opened = await runCommand(open);
    } finally {
      await server.stop();
    }
    expect(opened.code, opened.stderr).toBe(0);
    expect(opened.stdout).toContain(`${server.url}/`);
    const commands = commandsIn(startUp);
    expect(commands).toEqual(expect.arrayContaining(['npm run hearth -- open', `npm run model:tiny -- --data-dir ${server.dataDir}`]));
    await eachAtOnce(commands, (line) => expectHelp(line));
  }, 120_000);

  it('the README and docs/: every hearth and npm run hearth -- command in them runs with --help', async () => {
    const pages = [
      'README.md',
      ...readdirSync(join(REPO_ROOT, 'docs'))
        .filter((name) => name.endsWith('.md'))
        .map((name) => join('docs', name)),
    ];
    const commands = commandsIn(pages.map((page) => readFileSync(join(REPO_ROOT, page), 'utf8')).join('\n'));
    expect(commands).toEqual(expect.arrayContaining(['npm run hearth -- open', 'hearth open']));
    // The hearth commands as installed with npm link, from a folder outside the clone.
    await eachAtOnce(commands, (line) => expectHelp(line, line.startsWith('hearth ') ? { env: LINKED, cwd: ELSEWHERE } : {}));
  }, 300_000);

  it('nothing suggests npx hearth: not the README, the companion, the app or the scripts', () => {
    const offenders: string[] = [];
    const visit = (path: string) => {
      if (statSync(path).isDirectory()) {
        for (const name of readdirSync(path)) visit(join(path, name));
        return;
      }
      if (!/\.(ts|js|svelte|md)$/.test(path)) return;
      // Where the reason it is never suggested is explained, it may be named.
      if (/npx hearth/.test(readFileSync(path, 'utf8').replace(/`npx hearth`[\s\S]{0,160}?unrelated npm package/g, ''))) offenders.push(path);
    };
    for (const part of ['README.md', 'docs', 'companion', 'web/src', 'scripts', 'bin']) visit(join(REPO_ROOT, part));
    expect(offenders).toEqual([]);
  });
});

describe('a bad command line', () => {
  it('refuses an unknown HEARTH_ENGINE before starting', async () => {
    const result = await runNode(HEARTH_BIN, ['serve', '--port', '0'], { env: { ...env, HEARTH_ENGINE: 'turbo' } });
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe('hearth serve: HEARTH_ENGINE must be one of auto, server, in-process, not "turbo".');
  });

  it.each([
    [['keys', 'create', '--bogus'], 'hearth keys: unknown option --bogus'],
    [['keys', 'create', '--label'], 'hearth keys: --label needs a value'],
    [['config', 'export', '--bogus'], 'hearth config: unknown option --bogus'],
    [['config', 'plan', '--prune=yes', 'file.yaml'], 'hearth config: --prune takes no value'],
    [['mcp', 'status', '--json=1'], 'hearth mcp: --json takes no value'],
    [['mcp', 'status', '--url'], 'hearth mcp: --url needs a value'],
    [['serve', '--bogus'], 'hearth serve: unknown option --bogus'],
    [['open', 'now'], 'hearth open: unexpected argument now'],
    [['serve', 'extra'], 'hearth serve: unexpected argument extra'],
    [['secret', 'frobnicate'], 'hearth secret: Unknown or incomplete command "secret frobnicate".'],
    [['keys'], 'hearth keys: Say what to do.'],
    [['engine', 'frobnicate'], 'hearth engine: unknown action "frobnicate"'],
  ])('hearth %j exits 2 with one readable line and one of what to do, not the whole usage', async (args, line) => {
    const result = await hearth(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe(line);
    expect(result.stderr.split('\n')[1]).toBe(`Run "npm run hearth -- ${args[0]} --help" for its options.`);
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(2);
    expect(result.stderr).not.toContain('Usage:');
    // Not node:util's own wording.
    expect(result.stderr).not.toMatch(/To specify a positional argument|ERR_PARSE_ARGS|at parseArgs/);
  });
});
