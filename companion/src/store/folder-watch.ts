import { statSync, type Stats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Emitter } from '../emitter.js';
import { command, invocation } from '../invocation.js';
import type { Logger } from '../logger.js';
import { defaultDataDirectory, type DataPaths } from './data-dir.js';

/** How often the data folder is looked at: a deleted or moved folder is noticed within this. */
export const FOLDER_CHECK_MS = 2000;

/** Which file a path names: its device and inode, so a folder put in its place is told apart. */
interface Identity {
  dev: number;
  ino: number;
}

/**
 * Watches the data folder of the running companion. The database stays open on its file, so a
 * folder deleted or moved away while Hearth runs goes unnoticed by SQLite: what is saved after
 * that is lost (or lands in the moved folder), and the next start begins with an empty one. Every
 * FOLDER_CHECK_MS the folder and the database file at their paths are compared (device and inode,
 * one asynchronous stat each) with the ones opened at start: another folder there, or none, is
 * `gone`; the very same folder back in its place is `back`.
 */
export class DataFolderWatch {
  readonly events = new Emitter<{ gone: []; back: [] }>();
  private readonly expected: { root: Identity; database: Identity };
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> | undefined;
  private missing = false;

  constructor(private readonly options: { paths: DataPaths; log: Logger; intervalMs?: number }) {
    const { paths } = options;
    this.expected = { root: identity(statSync(paths.root)), database: identity(statSync(paths.database)) };
  }

  /** Whether the data folder Hearth opened is no longer where it was. */
  get gone(): boolean {
    return this.missing;
  }

  start(): void {
    // A look still running when the next is due is not joined by another.
    const look = () => {
      if (this.checking) return;
      this.check().catch((error: unknown) => this.options.log.warn({ err: error }, 'Could not look at the data folder.'));
    };
    this.timer ??= setInterval(look, this.options.intervalMs ?? FOLDER_CHECK_MS);
    // Never what keeps the process alive.
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Looks now (after a look already under way, which may have begun before a change); resolves when done. */
  check(): Promise<void> {
    const next = (this.checking ?? Promise.resolve()).catch(() => undefined).then(() => this.look());
    const settled = next.finally(() => {
      if (this.checking === settled) this.checking = undefined;
    });
    this.checking = settled;
    return settled;
  }

  private async look(): Promise<void> {
    const { paths, log } = this.options;
    const [root, database] = await Promise.all([identityAt(paths.root), identityAt(paths.database)]);
    if (root === null || database === null) return;
    const same = sameFile(root, this.expected.root) && sameFile(database, this.expected.database);
    if (!same && !this.missing) {
      this.missing = true;
      const open = command('open', invocation(), { dir: paths.root, defaultDir: defaultDataDirectory() });
      log.error(
        { dataDir: paths.root },
        `The data folder ${paths.root} was deleted or moved while Hearth was running. Nothing can be saved now: changes are refused, and a restart would begin with a new, empty data folder (no agents, settings, keys or sign-ins). ` +
          `To keep your data, put the folder back where it was (in place of the nearly empty one Hearth made there so that ${open} keeps working) and Hearth carries on; or restart Hearth to start with a new one.`,
      );
      this.events.emit('gone');
    } else if (same && this.missing) {
      this.missing = false;
      log.warn({ dataDir: paths.root }, `The data folder ${paths.root} is back in its place: Hearth saves changes again.`);
      this.events.emit('back');
    }
  }
}

function identity(stats: Stats): Identity {
  return { dev: stats.dev, ino: stats.ino };
}

function sameFile(a: Identity | undefined, b: Identity): boolean {
  return a !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/** The file at a path: undefined when there is none, null when it could not be told (left for the next look). */
async function identityAt(path: string): Promise<Identity | undefined | null> {
  try {
    return identity(await stat(path));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT' || code === 'ENOTDIR' ? undefined : null;
  }
}
