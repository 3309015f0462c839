import type { Dirent } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { HeldFolder } from './held-folder.js';
import { success } from '../result.js';
import { checkCancelled, stringArgument, ToolError, toolInput } from './tool.js';
import { displayPath, resolveInWorkspace, workspaceTool } from './workspace.js';

/** Most bytes read_file reads of one file; longer files are read in line ranges. */
const READ_LIMIT = 1024 * 1024;
/** Files larger than this are skipped by search_files. */
const SEARCH_FILE_LIMIT = 1024 * 1024;
const LIST_LIMIT = 500;
/** Folders search_files and recursive list_files do not descend into. */
const SKIPPED = new Set(['.git', 'node_modules']);

function integerArgument(args: Record<string, unknown>, name: string, fallback: number, minimum: number, maximum: number): number {
  const value = args[name];
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new ToolError(`${name} must be an integer.`);
  return Math.min(maximum, Math.max(minimum, value));
}

/** The first `limit` bytes of a plain file of `folder` (see HeldFolder.openFile for what is refused). */
async function readPrefix(folder: HeldFolder, name: string, limit: number, shown: string): Promise<{ bytes: Buffer; size: number }> {
  const { handle, stats } = await folder.openFile(name, shown);
  try {
    const buffer = Buffer.alloc(Math.min(stats.size, limit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { bytes: buffer.subarray(0, bytesRead), size: stats.size };
  } finally {
    await handle.close();
  }
}

/** Reads the start of a file of the workspace (a real path inside it), through its held folder. */
async function readWorkspaceFile(root: string, path: string, limit: number, signal: AbortSignal): Promise<{ bytes: Buffer; size: number }> {
  if (path === root) throw new ToolError('. is a folder; use list_files.');
  const folder = await HeldFolder.open(root, dirname(path), { signal });
  try {
    checkCancelled(signal);
    if ((await lstat(folder.at(basename(path))).catch(() => undefined))?.isDirectory())
      throw new ToolError(`${displayPath(root, path)} is a folder; use list_files.`);
    return await readPrefix(folder, basename(path), limit, displayPath(root, path));
  } finally {
    await folder.close();
  }
}

const isBinary = (bytes: Buffer) => bytes.subarray(0, 8192).includes(0);

export const readFileTool = workspaceTool({
  name: 'read_file',
  description: 'Read a text file in the workspace. Paths are relative to the workspace. Optionally a range of lines (1-based).',
  inputSchema: toolInput(['path'], {
    path: { type: 'string', description: 'Path relative to the workspace, e.g. "notes/todo.md".' },
    start_line: { type: 'integer', minimum: 1, description: 'First line to return (default 1).' },
    line_count: { type: 'integer', minimum: 1, description: 'How many lines to return (default: all).' },
  }),
  class: 'read',
  run: async (args, context, root) => {
    const path = await resolveInWorkspace(root, stringArgument(args, 'path'), { mustExist: true });
    const { bytes, size } = await readWorkspaceFile(root, path, READ_LIMIT, context.signal);
    if (isBinary(bytes)) return success(`${displayPath(root, path)} is a binary file of ${size} bytes; it is not shown.`);
    let text = bytes.toString('utf8');
    const start = integerArgument(args, 'start_line', 1, 1, Number.MAX_SAFE_INTEGER);
    const count = integerArgument(args, 'line_count', Number.MAX_SAFE_INTEGER, 1, Number.MAX_SAFE_INTEGER);
    if (start > 1 || count < Number.MAX_SAFE_INTEGER)
      text = text
        .split('\n')
        .slice(start - 1, start - 1 + count)
        .join('\n');
    const cut = size > READ_LIMIT ? `\n[only the first ${READ_LIMIT} of ${size} bytes were read; ask for a line range]` : '';
    return success(text + cut);
  },
});

interface Listed {
  path: string;
  kind: 'file' | 'folder' | 'link' | 'other';
  size: number;
}

type Step = 'stop' | 'descend' | 'next';

/**
 * Visits the entries under a held folder, depth-first in name order, `depth` levels deep: a
 * subfolder is entered (held, never through a link) when `visit` says so. Checks for
 * cancellation at every entry; answers false when `visit` stopped the walk.
 */
async function walk(
  folder: HeldFolder,
  shown: string,
  depth: number,
  signal: AbortSignal,
  visit: (entry: Dirent, folder: HeldFolder, path: string) => Promise<Step>,
): Promise<boolean> {
  const entries = await readdir(folder.self, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    checkCancelled(signal);
    const path = shown === '.' ? entry.name : join(shown, entry.name);
    const step = await visit(entry, folder, path);
    if (step === 'stop') return false;
    if (step !== 'descend' || depth <= 1) continue;
    const child = await folder.child(entry.name).catch((error: unknown) => {
      if (error instanceof ToolError) return undefined; // Changed meanwhile: left out.
      throw error;
    });
    if (!child) continue;
    try {
      if (!(await walk(child, path, depth - 1, signal, visit))) return false;
    } finally {
      await child.close();
    }
  }
  return true;
}

/** A folder of the workspace (a real path), held for a walk; a file is refused with `whenFile`. */
async function holdFolder(root: string, path: string, signal: AbortSignal, whenFile: string): Promise<HeldFolder> {
  if ((await lstat(path)).isDirectory()) return HeldFolder.open(root, path, { signal });
  throw new ToolError(`${displayPath(root, path)} is a file; ${whenFile}.`);
}

export const listFilesTool = workspaceTool({
  name: 'list_files',
  description: 'List the files and folders in a folder of the workspace (default: the workspace itself), optionally several levels deep.',
  inputSchema: toolInput([], {
    path: { type: 'string', description: 'Folder relative to the workspace (default ".").' },
    depth: { type: 'integer', minimum: 1, maximum: 10, description: 'Levels to list (default 1).' },
  }),
  class: 'read',
  run: async (args, context, root) => {
    const path = await resolveInWorkspace(root, stringArgument(args, 'path', { fallback: '.' }) || '.', { mustExist: true });
    const folder = await holdFolder(root, path, context.signal, 'use read_file');
    const entries: Listed[] = [];
    let complete: boolean;
    try {
      complete = await walk(folder, displayPath(root, path), integerArgument(args, 'depth', 1, 1, 10), context.signal, async (entry, parent, shown) => {
        if (entries.length >= LIST_LIMIT) return 'stop';
        // Links are listed, never followed: the tools resolve them when a path is used.
        const kind = entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'folder' : entry.isFile() ? 'file' : 'other';
        const size = kind === 'file' ? ((await lstat(parent.at(entry.name)).catch(() => undefined))?.size ?? 0) : 0;
        entries.push({ path: shown, kind, size });
        return kind === 'folder' && !SKIPPED.has(entry.name) ? 'descend' : 'next';
      });
    } finally {
      await folder.close();
    }
    const lines = entries.map((entry) =>
      entry.kind === 'folder' ? `${entry.path}/` : entry.kind === 'file' ? `${entry.path} (${entry.size} bytes)` : `${entry.path} (${entry.kind})`,
    );
    if (!complete) lines.push(`[stopped at ${LIST_LIMIT} entries]`);
    return success(lines.length > 0 ? lines.join('\n') : '(empty folder)', { entries });
  },
});

/** The matching lines of one file of a search; files the file tools refuse (FIFOs, hard links), large and binary ones are skipped. */
async function searchFile(folder: HeldFolder, name: string, shown: string, needle: string, matchCase: boolean, limit: number, hits: string[]): Promise<void> {
  let read: { bytes: Buffer; size: number };
  try {
    read = await readPrefix(folder, name, SEARCH_FILE_LIMIT, shown);
  } catch (error) {
    if (error instanceof ToolError) return;
    throw error;
  }
  if (read.size > SEARCH_FILE_LIMIT || isBinary(read.bytes)) return;
  const lines = read.bytes.toString('utf8').split('\n');
  for (let index = 0; index < lines.length && hits.length < limit; index++) {
    const line = lines[index]!;
    if ((matchCase ? line : line.toLowerCase()).includes(needle)) hits.push(`${shown}:${index + 1}: ${line.trim().slice(0, 200)}`);
  }
}

export const searchFilesTool = workspaceTool({
  name: 'search_files',
  description: 'Search the text files of the workspace for lines containing some text (plain text, not a pattern). Answers "path:line: text" lines.',
  inputSchema: toolInput(['query'], {
    query: { type: 'string', minLength: 1, description: 'The text to find.' },
    path: { type: 'string', description: 'Folder to search, relative to the workspace (default ".").' },
    case_sensitive: { type: 'boolean', description: 'Match letter case exactly (default false).' },
    max_results: { type: 'integer', minimum: 1, maximum: 500, description: 'Most matching lines (default 50).' },
  }),
  class: 'read',
  run: async (args, context, root) => {
    const query = stringArgument(args, 'query');
    if (!query) throw new ToolError('query must not be empty.');
    const path = await resolveInWorkspace(root, stringArgument(args, 'path', { fallback: '.' }) || '.', { mustExist: true });
    const matchCase = args.case_sensitive === true;
    const needle = matchCase ? query : query.toLowerCase();
    const limit = integerArgument(args, 'max_results', 50, 1, 500);
    const hits: string[] = [];
    const folder = await holdFolder(root, path, context.signal, 'give a folder (or use read_file)');
    try {
      await walk(folder, displayPath(root, path), Number.MAX_SAFE_INTEGER, context.signal, async (entry, parent, shown) => {
        if (entry.isDirectory()) return SKIPPED.has(entry.name) ? 'next' : 'descend';
        if (entry.isFile()) await searchFile(parent, entry.name, shown, needle, matchCase, limit, hits);
        return hits.length >= limit ? 'stop' : 'next';
      });
    } finally {
      await folder.close();
    }
    return success(hits.length > 0 ? hits.join('\n') : 'No matches.', { matches: hits.length });
  },
});
