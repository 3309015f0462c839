import { closeSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

export class DataDirectoryBusyError extends Error {
  constructor(directory: string, pid: number) {
    super(
      `Another Hearth process (pid ${pid}) is already using the data directory ${directory}. Stop it first, or start this one with --data-dir pointing elsewhere.`,
    );
    this.name = 'DataDirectoryBusyError';
  }
}

/** An exclusive lock on a data directory, held for the life of the process. */
export function lockDataDirectory(directory: string, file: string): () => void {
  const holder = takePidFile(file, 0o600);
  if (holder !== undefined) throw new DataDirectoryBusyError(directory, holder);
  return () => rmSync(file, { force: true });
}

/**
 * Takes a lock file that holds its owner's pid: created exclusively, or taken over when the
 * process that wrote it is gone. Answers undefined when taken, or the pid of the live holder.
 */
export function takePidFile(file: string, mode: number): number | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', mode);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(readText(file), 10);
      // Our own pid can only be a lock this process still holds.
      if (Number.isInteger(pid) && (pid === process.pid || processAlive(pid))) return pid;
      // The holder died without cleaning up: the lock is stale.
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Could not take the lock ${file}.`);
}

/** The file's text, or '' when it is gone (its holder just let it go). */
function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  }
}

/** Whether a process with this pid runs (one of another user counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
