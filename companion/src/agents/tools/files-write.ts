import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { attempt, stringArgument, success, ToolError, type BuiltinTool } from './tool.js';
import { displayPath, resolveInWorkspace, workspaceOf } from './workspace.js';

/**
 * Writes through a temporary file in the same folder and a rename: a reader never sees half a
 * file, and a link in the final place is replaced, never followed.
 */
async function replaceFile(path: string, content: string, mode?: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, content, { flag: 'wx', mode: mode ?? 0o644 });
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

export const writeFileTool: BuiltinTool = {
  name: 'write_file',
  description: 'Write a text file in the workspace, creating folders as needed and replacing the file if it exists.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'content'],
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace.' },
      content: { type: 'string', description: 'The whole new content of the file.' },
    },
  },
  class: 'write',
  hostOnly: true,
  needsWorkspace: true,
  run: (args, context) =>
    attempt(async () => {
      const root = workspaceOf(context);
      const path = await resolveInWorkspace(root, stringArgument(args, 'path'), { mustExist: false });
      const content = stringArgument(args, 'content');
      const existing = await stat(path).catch(() => undefined);
      if (existing?.isDirectory()) throw new ToolError(`${displayPath(root, path)} is a folder.`);
      await replaceFile(path, content, existing ? existing.mode & 0o777 : undefined);
      return success(`Wrote ${Buffer.byteLength(content)} bytes to ${displayPath(root, path)}.`);
    }),
};

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

export const editFileTool: BuiltinTool = {
  name: 'edit_file',
  description: 'Replace text in a file of the workspace. old_text must occur exactly once (include enough surrounding text), unless replace_all is true.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['path', 'old_text', 'new_text'],
    properties: {
      path: { type: 'string', description: 'Path relative to the workspace.' },
      old_text: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
      new_text: { type: 'string', description: 'The replacement.' },
      replace_all: { type: 'boolean', description: 'Replace every occurrence (default false).' },
    },
  },
  class: 'write',
  hostOnly: true,
  needsWorkspace: true,
  run: (args, context) =>
    attempt(async () => {
      const root = workspaceOf(context);
      const path = await resolveInWorkspace(root, stringArgument(args, 'path'), { mustExist: true });
      const oldText = stringArgument(args, 'old_text');
      const newText = stringArgument(args, 'new_text');
      if (!oldText) throw new ToolError('old_text must not be empty.');
      const info = await stat(path);
      if (!info.isFile()) throw new ToolError(`${displayPath(root, path)} is not a file.`);
      const text = await readFile(path, 'utf8');
      const count = occurrences(text, oldText);
      if (count === 0) throw new ToolError(`old_text was not found in ${displayPath(root, path)}; nothing was changed.`);
      if (count > 1 && args.replace_all !== true)
        throw new ToolError(`old_text occurs ${count} times in ${displayPath(root, path)}; include more context, or set replace_all. Nothing was changed.`);
      await replaceFile(path, text.split(oldText).join(newText), info.mode & 0o777);
      return success(`Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${displayPath(root, path)}.`);
    }),
};
