import { constants, existsSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { checkCancelled, ToolError } from './tool.js';

/**
 * On Linux `/proc/self/fd/N` names the very folder descriptor N holds, wherever it has been moved:
 * a path through it is resolved from that folder, not from its old name. That gives Node
 * (which has no `openat`) a way to act inside a folder it opened, race-free. Elsewhere the
 * folder's path is used, and a folder swapped for a link between the check and the use is not
 * caught.
 */
const THROUGH_DESCRIPTOR = existsSync('/proc/self/fd');

const FOLDER_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Never blocks (a FIFO with no writer opens at once) and never follows a link in the last place. */
const FILE_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW;

/**
 * A folder of the workspace, opened and held: every name under it is reached through the held
 * descriptor. It was reached one name at a time from the workspace, each opened without
 * following a link, so something that swaps a folder on the way for a link (to leave the
 * workspace) makes the open fail instead of leading outside.
 */
export class HeldFolder {
  private constructor(
    private readonly handle: FileHandle,
    /** The folder's real path when it was opened (for messages). */
    readonly path: string,
  ) {}

  /** The path to use for `name` inside this folder. */
  at(name: string): string {
    return THROUGH_DESCRIPTOR ? `/proc/self/fd/${this.handle.fd}/${name}` : join(this.path, name);
  }

  /** The path of the folder itself, for listing it. */
  get self(): string {
    return THROUGH_DESCRIPTOR ? `/proc/self/fd/${this.handle.fd}` : this.path;
  }

  close(): Promise<void> {
    return this.handle.close();
  }

  /** The workspace itself (its real path, as the run resolved it). */
  static async root(root: string): Promise<HeldFolder> {
    try {
      return new HeldFolder(await open(root, FOLDER_FLAGS), root);
    } catch {
      throw new ToolError('The workspace can no longer be opened as a folder.');
    }
  }

  /** `path` (a real path inside `root`, as resolveInWorkspace gives it), opened one folder at a time; `create` makes missing folders. */
  static async open(root: string, path: string, options: { create?: boolean; signal: AbortSignal }): Promise<HeldFolder> {
    const names = relative(root, path).split(sep).filter(Boolean);
    let folder = await HeldFolder.root(root);
    try {
      for (const name of names) {
        checkCancelled(options.signal);
        const next = await folder.child(name, options.create === true);
        await folder.close();
        folder = next;
      }
      return folder;
    } catch (error) {
      await folder.close().catch(() => undefined);
      throw error;
    }
  }

  /** A folder inside this one, never through a link. */
  async child(name: string, create = false): Promise<HeldFolder> {
    const shown = join(this.path, name);
    try {
      return new HeldFolder(await open(this.at(name), FOLDER_FLAGS), shown);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' && create) {
        await mkdir(this.at(name)).catch((made: NodeJS.ErrnoException) => {
          if (made.code !== 'EEXIST') throw made;
        });
        return this.child(name, false);
      }
      if (code === 'ENOENT') throw new ToolError(`The folder ${name} is gone.`);
      if (code === 'ENOTDIR' || code === 'ELOOP') throw new ToolError(`"${name}" is not a folder (or became a symbolic link while in use); it is refused.`);
      throw error;
    }
  }

  /**
   * Opens `name` in this folder for reading, only if it is a regular file with one link: never a
   * FIFO, socket or device (they could block a read forever), never a link (one swapped in
   * after the path was checked), never a file with other hard links (one may be outside the
   * workspace). The type is checked on the opened descriptor, which cannot change.
   */
  async openFile(name: string, shown = name): Promise<{ handle: FileHandle; stats: Stats }> {
    let handle: FileHandle;
    try {
      handle = await open(this.at(name), FILE_FLAGS);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new ToolError(`"${shown}" became a symbolic link while in use; it is refused.`);
      if (code === 'ENOENT') throw new ToolError(`No such file: ${shown}`);
      throw error;
    }
    try {
      const stats = await handle.stat();
      refuseUnlessPlainFile(shown, stats);
      return { handle, stats };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
}

/** The file tools' rule for what they read or replace: a regular file with exactly one link. */
export function refuseUnlessPlainFile(name: string, stats: Stats): void {
  if (stats.isDirectory()) throw new ToolError(`${name} is a folder.`);
  if (!stats.isFile()) throw new ToolError(`${name} is not a regular file (a FIFO, socket or device); the file tools refuse it.`);
  if (stats.nlink > 1)
    throw new ToolError(`${name} has ${stats.nlink} hard links (another name for it may be outside the workspace); the file tools refuse it.`);
}
