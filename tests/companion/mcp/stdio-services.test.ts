import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpManager } from '../../../companion/src/mcp/manager.js';
import {
  EVERYTHING,
  FILESYSTEM,
  MEMORY,
  MISBEHAVING,
  alive,
  memorySecrets,
  processesWithMarker,
  stdioService,
  testManager,
  waitFor,
} from '../../helpers/mcp.js';

/*
 * Real MCP services from npm over stdio, driven through the connection manager: discovery into
 * the namespaced catalog with classes, calls, a resource permission refusal surfacing as isError,
 * list-changed refreshes, secrets passed through the environment, and no process left behind.
 */

const marker = randomUUID();
const SECRET = 'everything-secret-5b1e9a7c3d';
let root: string;
let manager: McpManager;

function text(result: { content: unknown[] }): string {
  return (result.content as { type: string; text?: string }[]).map((block) => block.text ?? '').join('\n');
}

async function call(name: string, args: Record<string, unknown> = {}) {
  const entry = manager.entries().find((candidate) => candidate.name === name);
  if (!entry)
    throw new Error(
      `no tool ${name}; have ${manager
        .entries()
        .map((e) => e.name)
        .join(', ')}`,
    );
  return manager.call(entry, args);
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hearth-mcp-stdio-'));
  mkdirSync(join(root, 'allowed'));
  writeFileSync(join(root, 'allowed', 'note.txt'), 'inside the root');
  writeFileSync(join(root, 'outside.txt'), 'outside the root');
  manager = testManager(
    [
      stdioService('everything', [EVERYTHING, 'stdio'], { env: { API_KEY: 'secret:EVERYTHING_KEY' } }),
      stdioService('files', [FILESYSTEM, join(root, 'allowed')]),
      stdioService('memory', [MEMORY], { env: { MEMORY_FILE_PATH: join(root, 'memory.jsonl') }, expose: 'all' }),
      stdioService('dyn', [MISBEHAVING, 'dynamic']),
      stdioService('tree', [MISBEHAVING, 'grandchild']),
    ],
    { marker, secrets: memorySecrets({ EVERYTHING_KEY: SECRET }) },
  );
  manager.start();
  await waitFor(() => manager.status().every((service) => service.state !== 'connecting' && service.state !== 'disconnected'), 'every service settled');
});

afterAll(async () => {
  await manager.close();
  rmSync(root, { recursive: true, force: true });
});

describe('stdio services from npm', () => {
  it('connects each service and registers its tools as <service>_<tool> with classes from the annotations', () => {
    const states = Object.fromEntries(manager.status().map((service) => [service.name, [service.state, service.protocol]]));
    expect(states).toEqual({
      everything: ['connected', 'stdio'],
      files: ['connected', 'stdio'],
      memory: ['connected', 'stdio'],
      dyn: ['connected', 'stdio'],
      tree: ['connected', 'stdio'],
    });
    const everything = manager.serviceStatus('everything');
    expect(everything.server?.name).toMatch(/everything/);
    expect(everything.pid).toBeGreaterThan(0);
    const tools = Object.fromEntries(everything.tools.map((tool) => [tool.name, [tool.tool, tool.class, tool.exposed]]));
    expect(tools['everything_echo']).toEqual(['echo', 'read', true]);
    expect(tools['everything_toggle-simulated-logging']).toEqual(['toggle-simulated-logging', 'write', false]);
    const files = Object.fromEntries(manager.serviceStatus('files').tools.map((tool) => [tool.name, tool.class]));
    expect(files).toMatchObject({ files_read_text_file: 'read', files_write_file: 'write', files_list_directory: 'read' });
    // The built-in protected names stay Hearth's own.
    expect(manager.entries().find((entry) => entry.name === 'write_file')).toMatchObject({ service: null, hostOnly: true });
  });

  it('calls tools and returns the MCP CallToolResult', async () => {
    const echoed = await call('everything_echo', { message: 'hello from hearth' });
    expect(echoed.isError).toBeFalsy();
    expect(text(echoed)).toBe('Echo: hello from hearth');
    const sum = await call('everything_get-sum', { a: 2, b: 3 });
    expect(text(sum)).toContain('5');
    const structured = await call('everything_get-structured-content', { location: 'New York' });
    expect(structured.structuredContent).toBeDefined();
  });

  it('passes secret references in env to the process (resolved), and not the rest of its own environment', async () => {
    process.env.HEARTH_MCP_TEST_PARENT_ONLY = 'parent-only-value';
    try {
      await manager.reconnect('everything');
      const env = text(await call('everything_get-env'));
      expect(env).toContain(SECRET);
      expect(env).not.toContain('parent-only-value');
    } finally {
      delete process.env.HEARTH_MCP_TEST_PARENT_ONLY;
    }
  });

  it('filesystem: reads inside its root; a path outside is refused and surfaces as isError (execution_denied)', async () => {
    const inside = await call('files_read_text_file', { path: join(root, 'allowed', 'note.txt') });
    expect(inside.isError).toBeFalsy();
    expect(text(inside)).toBe('inside the root');
    const outside = await call('files_read_text_file', { path: join(root, 'outside.txt') });
    expect(outside.isError).toBe(true);
    expect(text(outside)).toMatch(/Access denied/);
    expect(text(outside)).not.toContain('outside the root');
    expect(manager.serviceStatus('files').last_call_error).toMatchObject({ tool: 'read_text_file', layer: 'execution_denied' });
  });

  it('memory: writes entities to its file and finds them again', async () => {
    const created = await call('memory_create_entities', { entities: [{ name: 'Hearth', entityType: 'project', observations: ['runs on 127.0.0.1'] }] });
    expect(created.isError).toBeFalsy();
    const found = await call('memory_search_nodes', { query: 'Hearth' });
    expect(text(found)).toContain('runs on 127.0.0.1');
    expect(readFileSync(join(root, 'memory.jsonl'), 'utf8')).toContain('Hearth');
  });

  it("replaces a service's whole catalog when it announces that its tool list changed", async () => {
    expect(
      manager
        .serviceStatus('dyn')
        .tools.map((tool) => tool.name)
        .sort(),
    ).toEqual(['dyn_first', 'dyn_swap']);
    // Every state the catalog passes through is the old list or the new one: never a mix.
    const seen = new Set<string>();
    const stop = manager.catalog.onChange(() =>
      seen.add(
        manager.catalog
          .forService('dyn')
          .map((entry) => entry.name)
          .sort()
          .join(','),
      ),
    );
    expect(text(await call('dyn_swap'))).toBe('swapped');
    await waitFor(() => manager.serviceStatus('dyn').tools.some((tool) => tool.name === 'dyn_second'), 'the refreshed catalog');
    stop();
    expect(manager.serviceStatus('dyn').tools.map((tool) => tool.name)).toEqual(['dyn_second']);
    expect(manager.entries().some((entry) => entry.name === 'dyn_first' || entry.name === 'dyn_swap')).toBe(false);
    expect([...seen].every((state) => state === 'dyn_first,dyn_swap' || state === 'dyn_second')).toBe(true);
  });

  it('leaves no process behind on close: not the services, not what they started', async () => {
    const grandchild = Number(text(await call('tree_child_pid')));
    expect(alive(grandchild)).toBe(true);
    const pids = manager.status().map((service) => service.pid!);
    expect(pids.every((pid) => pid > 0 && alive(pid))).toBe(true);
    expect(processesWithMarker(marker).length).toBeGreaterThanOrEqual(pids.length + 1);
    await manager.close();
    for (const pid of [...pids, grandchild]) await waitFor(() => !alive(pid), `process ${pid} to end`);
    expect(processesWithMarker(marker)).toEqual([]);
    expect(manager.status().every((service) => service.state === 'disconnected' && service.pid === null)).toBe(true);
    expect(existsSync(join(root, 'memory.jsonl'))).toBe(true);
  });
});
