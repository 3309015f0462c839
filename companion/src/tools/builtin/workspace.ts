import { lstat, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { attempt, ToolError, type BuiltinResult, type BuiltinTool, type ToolContext } from './tool.js';

/** The agent's workspace (a real path), or a tool error saying it has none. */
export function workspaceOf(context: ToolContext): string {
  if (!context.workspace) throw new ToolError('This agent has no workspace: file and shell tools are not available to it.');
  return context.workspace;
}

/**
 * A tool that works in the agent's workspace (the file and shell tools): host-only, refused to an
 * agent without a workspace, its `run` handed the workspace's real path, what it throws a tool error.
 */
export function workspaceTool(
  tool: Omit<BuiltinTool, 'hostOnly' | 'needsWorkspace' | 'run'> & {
    run(args: Record<string, unknown>, context: ToolContext, root: string): Promise<BuiltinResult>;
  },
): BuiltinTool {
  return { ...tool, hostOnly: true, needsWorkspace: true, run: (args, context) => attempt(() => tool.run(args, context, workspaceOf(context))) };
}

/** Whether `path` is `root` or lies under it (both real paths). */
export function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/** How a path inside the workspace is shown to the model: relative, with `.` for the workspace itself. */
export function displayPath(root: string, path: string): string {
  return relative(root, path) || '.';
}

/**
 * Resolves a path the model gave against the workspace, the way the file system will: every
 * existing part through realpath, so a symbolic link that leads outside is caught. Absolute
 * paths and `..` segments are refused outright. A path that does not exist yet (a file to
 * write) is resolved through its nearest existing ancestor; a dangling link is refused, since
 * writing through it would create its target wherever it points.
 */
export async function resolveInWorkspace(root: string, path: string, options: { mustExist: boolean }): Promise<string> {
  if (path.includes('\0')) throw new ToolError('The path contains a NUL character.');
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path)) throw new ToolError(`Absolute paths are refused ("${path}"): give a path relative to the workspace.`);
  if (path.split(/[\\/]+/).includes('..')) throw new ToolError(`".." is refused in paths ("${path}"): stay inside the workspace.`);
  const candidate = join(root, path);
  try {
    return confined(root, await realpath(candidate), path);
  } catch (error) {
    if (error instanceof ToolError || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  if (options.mustExist) throw new ToolError(`No such file or folder: ${path}`);
  if (
    await lstat(candidate).then(
      () => true,
      () => false,
    )
  )
    throw new ToolError(`"${path}" is a symbolic link to something that does not exist; it is refused.`);
  const rest: string[] = [];
  let ancestor = candidate;
  for (;;) {
    const parent = join(ancestor, '..');
    rest.unshift(ancestor.slice(parent.length + (parent.endsWith(sep) ? 0 : 1)));
    ancestor = parent;
    try {
      const real = confined(root, await realpath(ancestor), path);
      return join(real, ...rest);
    } catch (error) {
      if (error instanceof ToolError || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      if (ancestor === root || ancestor.length <= root.length) throw new ToolError(`The workspace itself no longer exists.`);
    }
  }
}

function confined(root: string, real: string, asked: string): string {
  if (!isInside(root, real)) throw new ToolError(`"${asked}" leads outside the workspace (through a symbolic link); it is refused.`);
  return real;
}
