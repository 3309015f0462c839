import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtinTool } from '../../../companion/src/tools/builtin/index.js';
import type { ProcessLedger } from '../../../companion/src/tools/builtin/containment.js';
import type { BuiltinResult, ToolContext } from '../../../companion/src/tools/builtin/tool.js';
import type { MemoryService } from '../../../companion/src/memory/service.js';
import { waitFor } from '../../helpers/agents.js';
import { alive } from '../../helpers/mcp.js';

/**
 * Commands that leave their process group (`setsid`) or daemonise (fork twice, the middle one
 * exits) are still ended with their call: on timeout, on cancel and when the shell exits.
 */
const root = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-contain-')));
const started: number[] = [];
afterAll(() => {
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
});

function context(extra: Partial<ToolContext> = {}): ToolContext {
  return { agentId: 'tester', workspace: root, signal: new AbortController().signal, memory: {} as MemoryService, shellTimeoutSeconds: 60, ...extra };
}
const shell = (args: Record<string, unknown>, ctx: ToolContext): Promise<BuiltinResult> => builtinTool('shell')!.run(args, ctx);
const text = (result: BuiltinResult) => result.content.map((block) => block.text).join('\n');

/**
 * A command that starts a setsid process, and a daemon the classic way (fork, setsid, fork again,
 * the middle one exits), each writing its pid to a file, then (optionally) waits.
 */
function escapees(name: string, thenWait: boolean): { command: string; pids(): Promise<number[]> } {
  const files = [join(root, `${name}-setsid.pid`), join(root, `${name}-daemon.pid`)];
  const command = [
    `setsid sh -c 'echo $$ > ${files[0]}; exec sleep 1000' > /dev/null 2>&1 &`,
    `( setsid sh -c "sh -c 'echo \\$\\$ > ${files[1]}; exec sleep 1000' < /dev/null > /dev/null 2>&1 &" & ) &`,
    thenWait ? 'sleep 1000' : 'true',
  ].join('\n');
  const pids = async () => {
    const found = await waitFor(() => {
      const read = files.map((file) => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : 0));
      return read.every((pid) => pid > 0) ? read : undefined;
    });
    started.push(...found);
    return found;
  };
  return { command, pids };
}

const gone = (pids: number[], what: string) => waitFor(() => (pids.some(alive) ? undefined : true), 20_000, what);

describe('shell containment', () => {
  it('on timeout, setsid and daemonised processes are ended too', { timeout: 60_000 }, async () => {
    const { command, pids } = escapees('timeout', true);
    const pending = shell({ command, timeout_seconds: 2 }, context());
    const escaped = await pids();
    const result = await pending;
    expect(text(result)).toContain('did not finish within 2 s');
    await gone(escaped, 'the escaped processes to be ended after the timeout');
  });

  it('on cancel, setsid and daemonised processes are ended too', { timeout: 60_000 }, async () => {
    const { command, pids } = escapees('cancel', true);
    const controller = new AbortController();
    const pending = shell({ command }, context({ signal: controller.signal }));
    const escaped = await pids();
    controller.abort();
    expect(text(await pending)).toContain('The run was cancelled');
    await gone(escaped, 'the escaped processes to be ended after the cancel');
  });

  it('when the shell exits, what it daemonised is ended before the call answers', { timeout: 60_000 }, async () => {
    const { command, pids } = escapees('exit', false);
    const result = await shell(
      { command: `${command}\nwhile [ ! -s ${join(root, 'exit-daemon.pid')} ] || [ ! -s ${join(root, 'exit-setsid.pid')} ]; do sleep 0.05; done` },
      context(),
    );
    expect(result.isError).toBe(false);
    await gone(await pids(), 'the daemonised processes to be ended after the shell exited');
  });

  it('marks each call in the ledger while it runs, and takes the mark off when it ends', { timeout: 60_000 }, async () => {
    const marks: string[] = [];
    const ledger: ProcessLedger = { started: (marker) => marks.push(marker), ended: (marker) => marks.splice(marks.indexOf(marker), 1) };
    const result = await shell({ command: 'echo "$HEARTH_TOOL_CALL"; [ -n "$HEARTH_TOOL_CALL" ]' }, context({ processes: ledger }));
    expect(result.isError).toBe(false);
    expect(text(result)).toMatch(/^exit code 0\ntc_[0-9a-f]{24}$/);
    expect(marks).toEqual([]);
  });
});
