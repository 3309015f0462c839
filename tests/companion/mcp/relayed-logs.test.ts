import { afterEach, describe, expect, it } from 'vitest';
import { McpManager, type ServiceEvent } from '../../../companion/src/mcp/manager.js';
import type { Logger } from '../../../companion/src/logger.js';
import { memorySecrets, MISBEHAVING, serviceSettings, stdioService, waitFor } from '../../helpers/mcp.js';

/*
 * Text a service sends on its own is external text too (9): a log message it sends, relayed to
 * /mcp clients, and the lines Hearth logs about it never show the credentials it was given.
 */

const TOKEN = 'leaky-token-7c6b5a4d3e2f1a0b';
let manager: McpManager | undefined;

afterEach(async () => {
  await manager?.close();
  manager = undefined;
});

describe('a service that repeats its token', () => {
  it('in a log message: the message relayed to /mcp clients has it redacted', async () => {
    const logged: string[] = [];
    const log: Logger = {
      info: (...args) => logged.push(JSON.stringify(args)),
      warn: (...args) => logged.push(JSON.stringify(args)),
      error: (...args) => logged.push(JSON.stringify(args)),
    };
    manager = new McpManager({
      services: serviceSettings([stdioService('leaky', [MISBEHAVING, 'leaky-log'], { env: { LEAK_TOKEN: 'secret:LEAK' }, auto_connect: false })]),
      secrets: memorySecrets({ LEAK: TOKEN }),
      log,
      version: 'test',
    });
    const events: ServiceEvent[] = [];
    manager.onServiceEvent((event) => events.push(event));
    expect((await manager.reconnect('leaky')).state).toBe('connected');
    const entry = manager.entries().find((candidate) => candidate.name === 'leaky_ok')!;
    await manager.call(entry, {});
    await waitFor(() => events.some((event) => event.type === 'log'), 'the service’s log message');
    const relayed = JSON.stringify(events);
    expect(relayed).not.toContain(TOKEN);
    expect(relayed).toContain('[redacted]');
    expect(logged.join('\n')).not.toContain(TOKEN);
  });
});
