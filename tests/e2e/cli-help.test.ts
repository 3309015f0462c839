import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cleanEnv, HEARTH_BIN, REPO_ROOT, runNode } from '../helpers/hearth-process.js';
import { tempFolder } from '../helpers/temp.js';

/* Every `hearth` subcommand answers --help with its usage, and a bad command line with one readable line and that usage. */

const COMMANDS = ['serve', 'pull', 'keys', 'secret', 'config', 'mcp', 'open', 'engine'];
const dataDir = tempFolder('cli');
const env = cleanEnv({ HEARTH_DATA_DIR: dataDir });
const hearth = (...args: string[]) => runNode(HEARTH_BIN, args, { env });

describe('hearth COMMAND --help', () => {
  it.each(COMMANDS)('hearth %s --help prints its usage on stdout and exits 0', async (command) => {
    for (const flag of ['--help', '-h']) {
      const result = await hearth(command, flag);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage:/);
      expect(result.stdout).toContain(`hearth ${command}`);
    }
  });

  it('--help after an action still answers with the usage, and does nothing else', async () => {
    const result = await hearth('keys', 'create', '--label', 'x', '--help');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Usage:\n {2}hearth keys create/);
    expect((await hearth('keys', 'list')).stdout).toMatch(/No access keys/);
  });

  it('hearth --help names every command and how to get its options', async () => {
    const result = await hearth('--help');
    expect(result.code).toBe(0);
    for (const command of COMMANDS) expect(result.stdout).toContain(`hearth ${command}`);
    expect(result.stdout).toContain('hearth COMMAND --help');
  });

  it("the README's command block lists every command", () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    const block = /## The `hearth` command\n+```\n([\s\S]*?)```/.exec(readme)?.[1] ?? '';
    for (const command of COMMANDS) expect(block).toMatch(new RegExp(`^hearth ${command} `, 'm'));
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
  ])('hearth %j exits 2 with one readable line and the usage', async (args, line) => {
    const result = await hearth(...args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n')[0]).toBe(line);
    expect(result.stderr).toContain(`\n\nUsage:`);
    // Not node:util's own wording.
    expect(result.stderr).not.toMatch(/To specify a positional argument|ERR_PARSE_ARGS|at parseArgs/);
  });
});
