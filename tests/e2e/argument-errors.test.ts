import { describe, expect, it } from 'vitest';
import { cleanEnv, HEARTH_BIN, runNode } from '../helpers/hearth-process.js';

/*
 * A command line Hearth cannot use gets the cause and one line of what to do: not the command's
 * whole usage, which buried the one line that mattered.
 */

describe('argument errors', () => {
  it('hearth serve --port 99999 prints the cause and how to start on a good port, and exits 2', async () => {
    const result = await runNode(HEARTH_BIN, ['serve', '--port', '99999']);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'hearth serve: --port must be a number from 0 to 65535, not "99999".',
      'Start with a port in that range (4777 unless config.yaml says otherwise), or 0 for any free one: npm run hearth -- serve --port 0',
    ]);
  });

  it('a bad HEARTH_PORT is named as such, not as --port', async () => {
    const result = await runNode(HEARTH_BIN, ['serve'], { env: cleanEnv({ HEARTH_PORT: 'eighty' }) });
    expect(result.code).toBe(2);
    expect(result.stderr.split('\n')[0]).toBe('hearth serve: HEARTH_PORT must be a number from 0 to 65535, not "eighty".');
    expect(result.stderr.trimEnd().split('\n')).toHaveLength(2);
  });

  it.each([
    [['devices', 'frobnicate'], 'hearth devices: Unknown command "frobnicate".', 'devices'],
    [['remote', 'add', '--bogus'], 'hearth remote: unknown option --bogus', 'remote'],
    [['pull'], 'hearth pull: missing <spec>', 'pull'],
  ])('hearth %j: one line of cause, one of where the options are explained', async (args, cause, name) => {
    const result = await runNode(HEARTH_BIN, args);
    expect(result.code).toBe(2);
    expect(result.stderr.trimEnd().split('\n')).toEqual([cause, `Run "npm run hearth -- ${name} --help" for its options.`]);
  });
});
