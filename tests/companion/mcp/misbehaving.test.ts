import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { McpManager } from '../../../companion/src/mcp/manager.js';
import type { McpServiceStatus } from '#shared/api/bridge.js';
import { MISBEHAVING, alive, processesWithMarker, stdioService, testManager, waitFor } from '../../helpers/mcp.js';

/*
 * Services that misbehave on purpose (tests/fixtures/mcp/misbehaving.mjs): each failure is
 * reported with its layer, and no process outlives the test. Outcomes must not depend on how
 * fast this machine starts a process or answers a call: a timeout is either the behaviour under
 * test (a service that never answers) or far longer than anything that should pass needs, even
 * on a loaded 2-core machine.
 */

let scratch: string;
let manager: McpManager | undefined;
let marker: string;

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'hearth-mcp-bad-'));
});

afterAll(() => rmSync(scratch, { recursive: true, force: true }));

afterEach(async () => {
  await manager?.close();
  manager = undefined;
  await waitFor(() => processesWithMarker(marker).length === 0, 'every fixture process to end');
});

/** Generous: a healthy service connects long before this, however loaded the machine is. */
const DISCOVERY_MS = 30_000;

/** One service in a fresh manager, connected (or failed) once. */
async function only(mode: string, extra: Record<string, unknown> = {}): Promise<McpServiceStatus> {
  marker = randomUUID();
  manager = testManager([stdioService(mode, [MISBEHAVING, mode], { auto_connect: false, discovery_timeout_ms: DISCOVERY_MS, ...extra })], { marker });
  return manager.reconnect(mode);
}

function text(result: { content: unknown[] }): string {
  return (result.content as { text?: string }[]).map((block) => block.text ?? '').join('\n');
}

describe('misbehaving stdio services', () => {
  it('a service that crashes mid-call: the call is isError, the layer is transport, the process is gone, a retry follows', async () => {
    const connected = await only('crash');
    expect(connected.state).toBe('connected');
    const pid = connected.pid!;
    const crash = manager!.entries().find((entry) => entry.name === 'crash_crash')!;
    const result = await manager!.call(crash, {});
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/closed the connection during the call/);
    await waitFor(() => manager!.serviceStatus('crash').state !== 'connected', 'the service to be seen as failed');
    const failed = manager!.serviceStatus('crash');
    expect(failed).toMatchObject({ state: 'failed', layer: 'transport', attempts: 1 });
    expect(failed.message).toMatch(/exited with code 3/);
    expect(failed.message).toMatch(/crashing on purpose/);
    expect(failed.next_retry_at).not.toBeNull();
    expect(failed.tools).toEqual([]);
    expect(failed.last_call_error).toMatchObject({ tool: 'crash', layer: 'transport' });
    await waitFor(() => !alive(pid), 'the crashed process to be gone');
    // Reconnection with backoff brings it back with a new process.
    await waitFor(() => manager!.serviceStatus('crash').state === 'connected', 'the automatic reconnection');
    const back = manager!.serviceStatus('crash');
    expect(back.pid).not.toBe(pid);
    expect(back.attempts).toBe(0);
    expect(
      text(
        await manager!.call(
          manager!.entries().find((entry) => entry.name === 'crash_ok')!,
          { text: 'again' },
        ),
      ),
    ).toContain('again');
  });

  it('a service that never answers discovery: discovery_timeout, and its process is ended', async () => {
    const status = await only('silent', { discovery_timeout_ms: 800 });
    expect(status).toMatchObject({ state: 'failed', layer: 'discovery_timeout', pid: null, tools: [] });
    expect(status.message).toMatch(/within 800 ms \(discovery_timeout_ms\)/);
    expect(status.next_retry_at).not.toBeNull();
  });

  it('a service with zero tools: zero_tools, not kept running, not retried', async () => {
    const status = await only('zero');
    expect(status).toMatchObject({ state: 'failed', layer: 'zero_tools', pid: null, next_retry_at: null });
    expect(processesWithMarker(marker)).toEqual([]);
  });

  it('a service whose only tool has an invalid schema: schema, with the tool and the problem named', async () => {
    const status = await only('invalid-schema');
    expect(status).toMatchObject({ state: 'failed', layer: 'schema', next_retry_at: null });
    expect(status.message).toMatch(/broken: schema is invalid/);
    expect(manager!.entries().some((entry) => entry.service === 'invalid-schema')).toBe(false);
  });

  it('a tool that outlasts tool_call_timeout_ms: isError, the service is told to cancel, and stays connected', async () => {
    const cancelFile = join(scratch, 'cancelled.txt');
    // The sleeping call never ends on its own (an hour); the quick one takes a millisecond: the
    // timeout lies so far between them that no machine's speed decides which side a call is on.
    const status = await only('slow', { tool_call_timeout_ms: 3000, env: { CANCEL_FILE: cancelFile } });
    expect(status.state).toBe('connected');
    const result = await manager!.call(
      manager!.entries().find((entry) => entry.name === 'slow_sleep')!,
      {},
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/did not answer within 3000 ms \(tool_call_timeout_ms\)/);
    await waitFor(() => existsSync(cancelFile), 'the cancellation to reach the service');
    expect(readFileSync(cancelFile, 'utf8')).toMatch(/^cancelled/);
    expect(manager!.serviceStatus('slow')).toMatchObject({ state: 'connected', last_call_error: { tool: 'sleep', layer: 'timeout' } });
    // A quick call on the same connection still works.
    const quick = await manager!.call(
      manager!.entries().find((entry) => entry.name === 'slow_sleep')!,
      { ms: 1 },
    );
    expect(text(quick)).toBe('slept');
  });

  it('a service that writes junk to stdout: transport, naming the junk', async () => {
    // Discovery ends only at its timeout (the junk service never answers); the junk it writes at
    // start must have arrived by then, so the timeout is far longer than a process takes to start.
    const status = await only('junk', { discovery_timeout_ms: 5000 });
    expect(status).toMatchObject({ state: 'failed', layer: 'transport' });
    expect(status.message).toMatch(/not MCP messages \(stdout must carry only JSON-RPC\)/);
    expect(status.message).toMatch(/Starting the junk service/);
  });

  it('a service that prints a banner and then speaks MCP: connected, the junk line skipped', async () => {
    const status = await only('junk-then-ok');
    expect(status.state).toBe('connected');
    expect(status.tools.map((tool) => tool.name)).toEqual(['junk-then-ok_echo']);
    expect(status.warnings.join('\n')).toMatch(/wrote 1 line\(s\) to stdout that are not MCP messages \(skipped\)/);
  });

  it('a command that does not exist: configuration, not retried', async () => {
    marker = randomUUID();
    manager = testManager([{ name: 'nothing', transport: 'stdio', command: '/nonexistent/hearth-mcp-server', auto_connect: false }], { marker });
    const status = await manager.reconnect('nothing');
    expect(status).toMatchObject({ state: 'failed', layer: 'configuration', next_retry_at: null });
    expect(status.message).toMatch(/ENOENT/);
  });

  it('an unset secret in env: configuration, and the service is not started', async () => {
    marker = randomUUID();
    manager = testManager([stdioService('unset', [MISBEHAVING, 'crash'], { auto_connect: false, env: { KEY: 'secret:NOT_SET_ANYWHERE' } })], { marker });
    const status = await manager.reconnect('unset');
    expect(status).toMatchObject({ state: 'failed', layer: 'configuration', pid: null });
    expect(status.message).toMatch(/env\.KEY refers to the secret NOT_SET_ANYWHERE, which is not set/);
  });
});
