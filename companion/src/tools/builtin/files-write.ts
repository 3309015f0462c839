import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { HeldFolder, refuseUnlessPlainFile } from './held-folder.js';
import { success } from '../result.js';
import { checkCancelled, stringArgument, ToolError, toolInput } from './tool.js';
import { displayPath, resolveInWorkspace, workspaceTool } from './workspace.js';

/**
 * Writes `name` in a held folder through a temporary file beside it and a rename: a reader never
 * sees half a file, and a link in the final place is replaced, never followed. Both go through
 * the held folder, so a folder on the way swapped for a link meanwhile cannot move the write.
 */
async function replaceFile(folder: HeldFolder, name: string, content: string, mode?: number): Promise<void> {
  const temporary = `${name}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(folder.at(temporary), content, { flag: 'wx', mode: mode ?? 0o644 });
    await rename(folder.at(temporary), folder.at(name));
  } catch (error) {
    await unlink(folder.at(temporary)).catch(() => undefined);
    throw error;
  }
}

/** What is in the place a write will take: nothing, or a plain file (whose mode the new one keeps). */
async function existing(folder: HeldFolder, name: string, shown: string): Promise<Stats | undefined> {
  const found = await lstat(folder.at(name)).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (found) refuseUnlessPlainFile(shown, found);
  return found;
}

/** The folder a file of the workspace (a real path) lives in, held; made when `create`. */
async function parentOf(root: string, path: string, signal: AbortSignal, create: boolean): Promise<HeldFolder> {
  if (path === root) throw new ToolError('. is a folder.');
  return HeldFolder.open(root, dirname(path), { create, signal });
}

export const writeFileTool = workspaceTool({
  name: 'write_file',
  description: 'Write a text file in the workspace, creating folders as needed and replacing the file if it exists.',
  inputSchema: toolInput(['path', 'content'], {
    path: { type: 'string', description: 'Path relative to the workspace.' },
    content: { type: 'string', description: 'The whole new content of the file.' },
  }),
  class: 'write',
  run: async (args, context, root) => {
    const path = await resolveInWorkspace(root, stringArgument(args, 'path'), { mustExist: false });
    const content = stringArgument(args, 'content');
    const folder = await parentOf(root, path, context.signal, true);
    try {
      const found = await existing(folder, basename(path), displayPath(root, path));
      checkCancelled(context.signal);
      await replaceFile(folder, basename(path), content, found ? found.mode & 0o777 : undefined);
    } finally {
      await folder.close();
    }
    return success(`Wrote ${Buffer.byteLength(content)} bytes to ${displayPath(root, path)}.`);
  },
});

function occurrences(text: string, needle: string): number {
  let count = 0;
  for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) count++;
  return count;
}

export const editFileTool = workspaceTool({
  name: 'edit_file',
  description: 'Replace text in a file of the workspace. old_text must occur exactly once (include enough surrounding text), unless replace_all is true.',
  inputSchema: toolInput(['path', 'old_text', 'new_text'], {
    path: { type: 'string', description: 'Path relative to the workspace.' },
    old_text: { type: 'string', minLength: 1, description: 'The exact text to replace.' },
    new_text: { type: 'string', description: 'The replacement.' },
    replace_all: { type: 'boolean', description: 'Replace every occurrence (default false).' },
  }),
  class: 'write',
  run: async (args, context, root) => {
    const path = await resolveInWorkspace(root, stringArgument(args, 'path'), { mustExist: true });
    const oldText = stringArgument(args, 'old_text');
    const newText = stringArgument(args, 'new_text');
    if (!oldText) throw new ToolError('old_text must not be empty.');
    const shown = displayPath(root, path);
    const folder = await parentOf(root, path, context.signal, false);
    let count: number;
    try {
      const { handle, stats } = await folder.openFile(basename(path), shown);
      let text: string;
      try {
        text = await handle.readFile('utf8');
      } finally {
        await handle.close();
      }
      count = occurrences(text, oldText);
      if (count === 0) throw new ToolError(`old_text was not found in ${shown}; nothing was changed.`);
      if (count > 1 && args.replace_all !== true)
        throw new ToolError(`old_text occurs ${count} times in ${shown}; include more context, or set replace_all. Nothing was changed.`);
      checkCancelled(context.signal);
      await replaceFile(folder, basename(path), text.split(oldText).join(newText), stats.mode & 0o777);
    } finally {
      await folder.close();
    }
    return success(`Replaced ${count} occurrence${count === 1 ? '' : 's'} in ${displayPath(root, path)}.`);
  },
});
