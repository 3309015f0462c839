import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { attempt, stringArgument, success, ToolError, type BuiltinTool, type ToolContext } from './tool.js';
import { displayPath, resolveInWorkspace, workspaceOf } from './workspace.js';

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

async function readPrefix(path: string, limit: number): Promise<{ bytes: Buffer; size: number }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(Math.min(size, limit));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return { bytes: buffer.subarray(0, bytesRead), size };
  } finally {
    await handle.close();
  }
}

const isBinary = (bytes: Buffer) => bytes.subarray(0, 8192).includes(0);

export const readFileTool: BuiltinTool = {
  name: 'read_file',
  description: 'Read a text file in the workspace. Paths are relative to the workspace. Optionally a range of lines (1-based).',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['path'],
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace, e.g. "notes/todo.md".' },
      start_line: { type: 'integer', minimum: 1, description: 'First line to return (default 1).' },
      line_count: { type: 'integer', minimum: 1, description: 'How many lines to return (default: all).' },
    },
  },
  class: 'read',
  hostOnly: true,
  needsWorkspace: true,
  run: (args, context) =>
    attempt(async () => {
      const root = workspaceOf(context);
      const path = await resolveInWorkspace(root, stringArgument(args, 'path'), { mustExist: true });
      if ((await stat(path)).isDirectory()) throw new ToolError(`${displayPath(root, path)} is a folder; use list_files.`);
      const { bytes, size } = await readPrefix(path, READ_LIMIT);
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
    }),
};

interface Listed {
  path: string;
  kind: 'file' | 'folder' | 'link' | 'other';
  size: number;
}

async function walk(root: string, folder: string, depth: number, out: Listed[]): Promise<boolean> {
  const entries = await readdir(folder, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (out.length >= LIST_LIMIT) return false;
    const full = join(folder, entry.name);
    // Links are listed, never followed: the tools resolve them when a path is used.
    const kind = entry.isSymbolicLink() ? 'link' : entry.isDirectory() ? 'folder' : entry.isFile() ? 'file' : 'other';
    out.push({ path: displayPath(root, full), kind, size: kind === 'file' ? (await stat(full).catch(() => ({ size: 0 }))).size : 0 });
    if (kind === 'folder' && depth > 1 && !SKIPPED.has(entry.name) && !(await walk(root, full, depth - 1, out))) return false;
  }
  return true;
}

export const listFilesTool: BuiltinTool = {
  name: 'list_files',
  description: 'List the files and folders in a folder of the workspace (default: the workspace itself), optionally several levels deep.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      path: { type: 'string', description: 'Folder relative to the workspace (default ".").' },
      depth: { type: 'integer', minimum: 1, maximum: 10, description: 'Levels to list (default 1).' },
    },
  },
  class: 'read',
  hostOnly: true,
  needsWorkspace: true,
  run: (args, context) =>
    attempt(async () => {
      const root = workspaceOf(context);
      const folder = await resolveInWorkspace(root, stringArgument(args, 'path', { fallback: '.' }) || '.', { mustExist: true });
      if (!(await stat(folder)).isDirectory()) throw new ToolError(`${displayPath(root, folder)} is a file; use read_file.`);
      const entries: Listed[] = [];
      const complete = await walk(root, folder, integerArgument(args, 'depth', 1, 1, 10), entries);
      const lines = entries.map((entry) =>
        entry.kind === 'folder' ? `${entry.path}/` : entry.kind === 'file' ? `${entry.path} (${entry.size} bytes)` : `${entry.path} (${entry.kind})`,
      );
      if (!complete) lines.push(`[stopped at ${LIST_LIMIT} entries]`);
      return success(lines.length > 0 ? lines.join('\n') : '(empty folder)', { entries });
    }),
};

async function searchFolder(root: string, folder: string, needle: string, matchCase: boolean, limit: number, hits: string[]): Promise<void> {
  const entries = await readdir(folder, { withFileTypes: true });
  entries.sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    if (hits.length >= limit) return;
    const full = join(folder, entry.name);
    if (entry.isDirectory() && !SKIPPED.has(entry.name)) await searchFolder(root, full, needle, matchCase, limit, hits);
    if (!entry.isFile()) continue;
    const { bytes, size } = await readPrefix(full, SEARCH_FILE_LIMIT);
    if (size > SEARCH_FILE_LIMIT || isBinary(bytes)) continue;
    const lines = bytes.toString('utf8').split('\n');
    for (let index = 0; index < lines.length && hits.length < limit; index++) {
      const line = lines[index]!;
      if ((matchCase ? line : line.toLowerCase()).includes(needle)) hits.push(`${displayPath(root, full)}:${index + 1}: ${line.trim().slice(0, 200)}`);
    }
  }
}

export const searchFilesTool: BuiltinTool = {
  name: 'search_files',
  description: 'Search the text files of the workspace for lines containing some text (plain text, not a pattern). Answers "path:line: text" lines.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['query'],
    properties: {
      query: { type: 'string', minLength: 1, description: 'The text to find.' },
      path: { type: 'string', description: 'Folder to search, relative to the workspace (default ".").' },
      case_sensitive: { type: 'boolean', description: 'Match letter case exactly (default false).' },
      max_results: { type: 'integer', minimum: 1, maximum: 500, description: 'Most matching lines (default 50).' },
    },
  },
  class: 'read',
  hostOnly: true,
  needsWorkspace: true,
  run: (args, context: ToolContext) =>
    attempt(async () => {
      const root = workspaceOf(context);
      const query = stringArgument(args, 'query');
      if (!query) throw new ToolError('query must not be empty.');
      const folder = await resolveInWorkspace(root, stringArgument(args, 'path', { fallback: '.' }) || '.', { mustExist: true });
      const matchCase = args.case_sensitive === true;
      const limit = integerArgument(args, 'max_results', 50, 1, 500);
      const hits: string[] = [];
      if ((await stat(folder)).isDirectory()) await searchFolder(root, folder, matchCase ? query : query.toLowerCase(), matchCase, limit, hits);
      else throw new ToolError(`${displayPath(root, folder)} is a file; give a folder (or use read_file).`);
      return success(hits.length > 0 ? hits.join('\n') : 'No matches.', { matches: hits.length });
    }),
};
