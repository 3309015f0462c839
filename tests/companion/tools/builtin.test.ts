import { mkdirSync, mkdtempSync, readFileSync, realpathSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS, builtinTool } from '../../../companion/src/tools/builtin/index.js';
import type { BuiltinResult, ToolContext } from '../../../companion/src/tools/builtin/tool.js';
import type { MemoryService } from '../../../companion/src/memory/service.js';
import { alive } from '../../helpers/mcp.js';
import { waitFor } from '../../helpers/agents.js';

/** A workspace with a file, a folder, and links that lead inside and outside of it. */
function fixture() {
  const outside = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-outside-')));
  writeFileSync(join(outside, 'secret.txt'), 'outside secret');
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'hearth-ws-')));
  writeFileSync(join(root, 'notes.md'), 'line one\nline two\nThe Kayak is red\n');
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'sub', 'deep.txt'), 'deep kayak\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'leak.txt'));
  symlinkSync(outside, join(root, 'out'));
  symlinkSync(join(root, 'notes.md'), join(root, 'inner-link.md'));
  symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling.txt'));
  return { root, outside };
}

function context(workspace: string | null, extra: Partial<ToolContext> = {}): ToolContext {
  return { agentId: 'tester', workspace, signal: new AbortController().signal, memory: {} as MemoryService, shellTimeoutSeconds: 30, ...extra };
}

const call = (name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<BuiltinResult> => builtinTool(name)!.run(args, ctx);
const text = (result: BuiltinResult) => result.content.map((block) => block.text).join('\n');

describe('the built-in tools', () => {
  it('are one shape: name, schema, class, host-only flag and an implementation', () => {
    expect(BUILTIN_TOOLS.map((tool) => [tool.name, tool.class, tool.hostOnly])).toEqual([
      ['read_file', 'read', true],
      ['list_files', 'read', true],
      ['search_files', 'read', true],
      ['write_file', 'write', true],
      ['edit_file', 'write', true],
      ['shell', 'exec', true],
      ['current_time', 'read', false],
      ['memory_search_pinned', 'read', false],
      ['memory_search_episodes', 'read', false],
      ['memory_search_transcript', 'read', false],
      ['memory_pin', 'write', false],
    ]);
    const ajv = new Ajv({ strict: false });
    for (const tool of BUILTIN_TOOLS) {
      expect(typeof tool.run).toBe('function');
      expect(tool.description.length, tool.name).toBeGreaterThan(20);
      expect(() => ajv.compile(tool.inputSchema), tool.name).not.toThrow();
    }
  });

  it('without a workspace, file and shell tools refuse', async () => {
    for (const name of ['read_file', 'list_files', 'write_file', 'shell']) {
      const result = await call(name, { path: 'x', command: 'true', content: '', query: 'x' }, context(null));
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('no workspace');
    }
  });
});

describe('workspace confinement', () => {
  const { root, outside } = fixture();
  const ctx = context(root);

  it.each([
    ['read_file', { path: '../secret.txt' }, '".." is refused'],
    ['read_file', { path: 'sub/../../x' }, '".." is refused'],
    ['read_file', { path: join(outside, 'secret.txt') }, 'Absolute paths are refused'],
    ['read_file', { path: '/etc/passwd' }, 'Absolute paths are refused'],
    ['read_file', { path: 'leak.txt' }, 'leads outside the workspace'],
    ['read_file', { path: 'out/secret.txt' }, 'leads outside the workspace'],
    ['list_files', { path: 'out' }, 'leads outside the workspace'],
    ['search_files', { query: 'secret', path: 'out' }, 'leads outside the workspace'],
    ['write_file', { path: 'out/new.txt', content: 'x' }, 'leads outside the workspace'],
    ['write_file', { path: 'leak.txt', content: 'overwritten' }, 'leads outside the workspace'],
    ['write_file', { path: 'dangling.txt', content: 'x' }, 'symbolic link to something that does not exist'],
    ['write_file', { path: '../escape.txt', content: 'x' }, '".." is refused'],
    ['edit_file', { path: 'leak.txt', old_text: 'outside', new_text: 'inside' }, 'leads outside the workspace'],
    ['shell', { command: 'pwd', cwd: 'out' }, 'leads outside the workspace'],
    ['shell', { command: 'pwd', cwd: '/tmp' }, 'Absolute paths are refused'],
  ])('%s %j is refused with a tool error', async (name, args, message) => {
    const result = await call(name, args, ctx);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain(message);
    expect(text(result)).not.toContain('outside secret');
  });

  it('nothing outside was read or changed', () => {
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('outside secret');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
    expect(existsSync(join(root, '..', 'escape.txt'))).toBe(false);
  });

  it('reads, lists and searches inside, following links that stay inside', async () => {
    expect(text(await call('read_file', { path: 'notes.md' }, ctx))).toBe('line one\nline two\nThe Kayak is red\n');
    expect(text(await call('read_file', { path: 'notes.md', start_line: 2, line_count: 1 }, ctx))).toBe('line two');
    expect(text(await call('read_file', { path: 'inner-link.md' }, ctx))).toContain('line one');
    const listing = text(await call('list_files', { depth: 2 }, ctx));
    expect(listing.split('\n')).toEqual([
      'dangling.txt (link)',
      'inner-link.md (link)',
      'leak.txt (link)',
      'notes.md (35 bytes)',
      'out (link)',
      'sub/',
      'sub/deep.txt (11 bytes)',
    ]);
    // Links are never followed by a search: the secret behind out/ and leak.txt stays unread.
    expect(text(await call('search_files', { query: 'KAYAK' }, ctx)).split('\n')).toEqual(['notes.md:3: The Kayak is red', 'sub/deep.txt:1: deep kayak']);
    expect(text(await call('search_files', { query: 'secret' }, ctx))).toBe('No matches.');
    expect(text(await call('search_files', { query: 'Kayak', case_sensitive: true }, ctx))).toBe('notes.md:3: The Kayak is red');
  });

  it('writes and edits inside, creating folders, and refuses an ambiguous edit', async () => {
    expect((await call('write_file', { path: 'made/new/file.txt', content: 'alpha beta alpha' }, ctx)).isError).toBe(false);
    expect(readFileSync(join(root, 'made/new/file.txt'), 'utf8')).toBe('alpha beta alpha');
    const ambiguous = await call('edit_file', { path: 'made/new/file.txt', old_text: 'alpha', new_text: 'gamma' }, ctx);
    expect(ambiguous.isError).toBe(true);
    expect(text(ambiguous)).toContain('occurs 2 times');
    expect((await call('edit_file', { path: 'made/new/file.txt', old_text: 'beta', new_text: 'delta' }, ctx)).isError).toBe(false);
    expect((await call('edit_file', { path: 'made/new/file.txt', old_text: 'alpha', new_text: 'x', replace_all: true }, ctx)).isError).toBe(false);
    expect(readFileSync(join(root, 'made/new/file.txt'), 'utf8')).toBe('x delta x');
    expect(text(await call('edit_file', { path: 'made/new/file.txt', old_text: 'zzz', new_text: 'y' }, ctx))).toContain('was not found');
  });
});

describe('shell', () => {
  const { root } = fixture();

  it('runs in the workspace with a minimal environment, and reports the exit code', async () => {
    process.env.HEARTH_TEST_SECRET_VALUE = 'do-not-leak';
    try {
      const ok = await call('shell', { command: 'pwd; echo "[$HEARTH_TEST_SECRET_VALUE]"' }, context(root));
      expect(ok.isError).toBe(false);
      expect(text(ok)).toBe(`exit code 0\n${root}\n[]`);
      const failed = await call('shell', { command: 'echo oops >&2; exit 3', cwd: 'sub' }, context(root));
      expect(failed.isError).toBe(true);
      expect(text(failed)).toBe('(in sub) exit code 3\noops');
    } finally {
      delete process.env.HEARTH_TEST_SECRET_VALUE;
    }
  });

  it('on timeout kills the whole process group, grandchildren included', async () => {
    const pidFile = join(root, 'grandchild.pid');
    const result = await call('shell', { command: `sleep 300 & echo $! > ${JSON.stringify(pidFile)}; wait`, timeout_seconds: 1 }, context(root));
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('did not finish within 1 s');
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    await waitFor(() => (alive(grandchild) ? undefined : true), 5000, 'the grandchild to be gone');
  });

  it('the configured limit caps the time a call asks for, and cancellation kills the command', async () => {
    const capped = await call('shell', { command: 'sleep 30', timeout_seconds: 100 }, context(root, { shellTimeoutSeconds: 1 }));
    expect(text(capped)).toContain('within 1 s');
    const controller = new AbortController();
    const pidFile = join(root, 'cancelled.pid');
    const pending = call('shell', { command: `sleep 300 & echo $! > ${JSON.stringify(pidFile)}; wait` }, context(root, { signal: controller.signal }));
    const grandchild = await waitFor(() => (existsSync(pidFile) && readFileSync(pidFile, 'utf8').trim() ? Number(readFileSync(pidFile, 'utf8')) : undefined));
    controller.abort();
    expect(text(await pending)).toContain('The run was cancelled');
    await waitFor(() => (alive(grandchild) ? undefined : true), 5000, 'the cancelled command to be gone');
  });

  it('what a command leaves running in the background is ended with it', async () => {
    const pidFile = join(root, 'background.pid');
    const result = await call('shell', { command: `sleep 300 > /dev/null 2>&1 & echo $! > ${JSON.stringify(pidFile)}` }, context(root));
    expect(result.isError).toBe(false);
    await waitFor(() => (alive(Number(readFileSync(pidFile, 'utf8'))) ? undefined : true), 5000, 'the background process to be gone');
  });
});

describe('a cancelled run', () => {
  const { root } = fixture();
  const args: Record<string, Record<string, unknown>> = {
    read_file: { path: 'notes.md' },
    list_files: {},
    search_files: { query: 'kayak' },
    write_file: { path: 'cancelled.txt', content: 'x' },
    edit_file: { path: 'notes.md', old_text: 'line one', new_text: 'changed' },
    shell: { command: 'echo ran > ran.txt' },
    current_time: {},
    memory_search_pinned: { query: 'x' },
    memory_search_episodes: { query: 'x' },
    memory_search_transcript: { query: 'x' },
    memory_pin: { text: 'a fact' },
  };
  // A memory search that never ends (an embedding model that does not answer); pinning must not happen either.
  const memory = { search: () => new Promise(() => undefined), editor: { pin: () => ({ id: 1, merged: false }) } } as unknown as MemoryService;

  it('every built-in tool answers a cancelled run with a tool error and does nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    expect(BUILTIN_TOOLS.map((tool) => tool.name).sort()).toEqual(Object.keys(args).sort());
    for (const tool of BUILTIN_TOOLS) {
      const result = await tool.run(args[tool.name]!, context(root, { signal: controller.signal, memory }));
      expect(result.isError, tool.name).toBe(true);
      expect(text(result), tool.name).toMatch(/cancelled/i);
    }
    expect(existsSync(join(root, 'cancelled.txt'))).toBe(false);
    expect(existsSync(join(root, 'ran.txt'))).toBe(false);
    expect(readFileSync(join(root, 'notes.md'), 'utf8')).toContain('line one');
  });

  it('a memory search that waits on its model stops when the run is cancelled', { timeout: 60_000 }, async () => {
    const controller = new AbortController();
    const pending = builtinTool('memory_search_episodes')!.run({ query: 'x' }, context(root, { signal: controller.signal, memory }));
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('cancelled');
  });
});

describe('current_time', () => {
  it('answers UTC and a named zone, and refuses an unknown zone', async () => {
    const result = await call('current_time', { timezone: 'Asia/Tokyo' }, context(null));
    expect(result.isError).toBe(false);
    expect(text(result)).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z \(UTC\)\n.* \(Asia\/Tokyo\)$/);
    const bad = await call('current_time', { timezone: 'Mars/Olympus' }, context(null));
    expect(bad.isError).toBe(true);
  });
});
