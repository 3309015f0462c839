import { execFileSync, spawn } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { builtinTool } from '../../../companion/src/tools/builtin/index.js';
import type { BuiltinResult, ToolContext } from '../../../companion/src/tools/builtin/tool.js';
import type { MemoryService } from '../../../companion/src/memory/service.js';

/**
 * What a workspace can hold besides plain files, and what another process can do to it while
 * the file tools work: FIFOs, hard links to files outside, and a folder swapped for a link.
 */
function context(workspace: string, signal = new AbortController().signal): ToolContext {
  return { agentId: 'tester', workspace, signal, memory: {} as MemoryService, shellTimeoutSeconds: 30 };
}
const call = (name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<BuiltinResult> => builtinTool(name)!.run(args, ctx);
const text = (result: BuiltinResult) => result.content.map((block) => block.text).join('\n');
const folder = (name: string) => realpathSync(mkdtempSync(join(tmpdir(), `hearth-${name}-`)));

describe('FIFOs in a workspace', () => {
  const root = folder('fifo-ws');
  mkdirSync(join(root, 'tree/deeper'), { recursive: true });
  writeFileSync(join(root, 'tree/a.md'), 'a kayak\n');
  writeFileSync(join(root, 'tree/deeper/b.md'), 'b kayak\n');
  for (const name of ['notes.md', 'tree/pipe.md', 'tree/deeper/pipe.md', 'one', 'two', 'three', 'four']) execFileSync('mkfifo', [join(root, name)]);
  const ctx = context(root);

  it('read_file refuses a FIFO at once instead of waiting for a writer', { timeout: 60_000 }, async () => {
    const result = await call('read_file', { path: 'notes.md' }, ctx);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('not a regular file');
  });

  it('several FIFO reads at once leave the thread pool free for the next read', { timeout: 60_000 }, async () => {
    const results = await Promise.all(['one', 'two', 'three', 'four', 'notes.md'].map((path) => call('read_file', { path }, ctx)));
    expect(results.every((result) => result.isError)).toBe(true);
    expect(text(await call('read_file', { path: 'tree/a.md' }, ctx))).toBe('a kayak\n');
  });

  it('a search over a tree with FIFOs in it completes with the plain files’ matches', { timeout: 60_000 }, async () => {
    expect(text(await call('search_files', { query: 'kayak' }, ctx)).split('\n')).toEqual(['tree/a.md:1: a kayak', 'tree/deeper/b.md:1: b kayak']);
    expect(text(await call('list_files', { path: 'tree' }, ctx)).split('\n')).toEqual(['tree/a.md (8 bytes)', 'tree/deeper/', 'tree/pipe.md (other)']);
  });

  it('edit_file and write_file refuse a FIFO too', { timeout: 60_000 }, async () => {
    const edit = await call('edit_file', { path: 'notes.md', old_text: 'a', new_text: 'b' }, ctx);
    expect(text(edit)).toContain('not a regular file');
    const write = await call('write_file', { path: 'notes.md', content: 'x' }, ctx);
    expect(text(write)).toContain('not a regular file');
  });
});

describe('cancelling a walk', () => {
  const root = folder('walk-ws');
  for (let outer = 0; outer < 40; outer++) {
    mkdirSync(join(root, `d${outer}`));
    for (let inner = 0; inner < 25; inner++) writeFileSync(join(root, `d${outer}`, `f${inner}.txt`), `needle ${outer}/${inner}\n`);
  }

  it.each([
    ['search_files', { query: 'needle', max_results: 500 }],
    ['list_files', { depth: 3 }],
  ])('%s stops when the run is cancelled during the walk', { timeout: 60_000 }, async (name, args) => {
    const whole = await call(name, args, context(root));
    expect(whole.isError).toBe(false);
    const controller = new AbortController();
    const pending = call(name, args, context(root, controller.signal));
    // The walk has begun (it needs many rounds of the event loop for 1,000 files); cancel now.
    await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('cancelled');
  });
});

describe('hard links', () => {
  const outside = folder('hardlink-outside');
  const root = folder('hardlink-ws');
  writeFileSync(join(outside, 'secret.txt'), 'outside secret kayak\n');
  try {
    linkSync(join(outside, 'secret.txt'), join(root, 'linked.txt'));
  } catch {
    // Another file system: hard links cannot cross it, and the cases below still hold.
    writeFileSync(join(root, 'linked.txt'), 'outside secret kayak\n');
    linkSync(join(root, 'linked.txt'), join(root, 'second-name.txt'));
  }
  writeFileSync(join(root, 'plain.txt'), 'plain kayak\n');
  const ctx = context(root);

  it('a file with more than one link is neither read, searched, edited nor replaced', async () => {
    const read = await call('read_file', { path: 'linked.txt' }, ctx);
    expect(read.isError).toBe(true);
    expect(text(read)).toContain('hard links');
    expect(text(read)).not.toContain('outside secret');
    expect(text(await call('search_files', { query: 'kayak' }, ctx))).toBe('plain.txt:1: plain kayak');
    expect(text(await call('edit_file', { path: 'linked.txt', old_text: 'secret', new_text: 'public' }, ctx))).toContain('hard links');
    expect(text(await call('write_file', { path: 'linked.txt', content: 'replaced' }, ctx))).toContain('hard links');
    expect(readFileSync(join(root, 'linked.txt'), 'utf8')).toBe('outside secret kayak\n');
    expect(text(await call('read_file', { path: 'plain.txt' }, ctx))).toBe('plain kayak\n');
  });
});

describe('a folder swapped for a link while the tools work', () => {
  const outside = folder('swap-outside');
  const root = folder('swap-ws');
  mkdirSync(join(root, 'dir'));
  writeFileSync(join(root, 'dir', 'inner.txt'), 'inside\n');
  writeFileSync(join(outside, 'inner.txt'), 'outside secret\n');
  // A second process swaps dir for a link to the outside folder and back, holding each for a moment.
  const swapper = spawn(
    process.execPath,
    [
      '-e',
      `const fs = require('node:fs');
       const [dir, away, target] = process.argv.slice(1);
       const hold = () => { const until = process.hrtime.bigint() + 300_000n; while (process.hrtime.bigint() < until); };
       process.stdout.write('ready\\n');
       for (;;) {
         try { fs.renameSync(dir, away); fs.symlinkSync(target, dir); } catch {}
         hold();
         try { fs.unlinkSync(dir); fs.renameSync(away, dir); } catch {}
         hold();
       }`,
      join(root, 'dir'),
      join(root, 'dir-away'),
      outside,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = new Promise((resolve) => swapper.stdout.once('data', resolve));
  afterAll(() => void swapper.kill('SIGKILL'));

  it('no write lands outside and no read returns what is outside', { timeout: 120_000 }, async () => {
    await ready;
    const ctx = context(root);
    let written = 0;
    let refused = 0;
    for (let round = 0; round < 150; round++) {
      const [shallow, deep, read] = await Promise.all([
        call('write_file', { path: `dir/new-${round}.txt`, content: 'x' }, ctx),
        call('write_file', { path: `dir/made-${round}/deep.txt`, content: 'y' }, ctx),
        call('read_file', { path: 'dir/inner.txt' }, ctx),
      ]);
      for (const result of [shallow, deep])
        if (result.isError) refused++;
        else written++;
      expect(text(read)).not.toContain('outside secret');
    }
    swapper.kill('SIGKILL');
    await new Promise((resolve) => swapper.once('exit', resolve));
    expect(readdirSync(outside)).toEqual(['inner.txt']);
    // Both outcomes happened: writes inside while the folder was there, refusals while it was a link.
    expect(written).toBeGreaterThan(0);
    expect(written + refused).toBe(300);
    expect(existsSync(join(outside, 'new-0.txt'))).toBe(false);
  });
});
