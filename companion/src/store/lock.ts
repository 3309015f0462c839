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
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
      // Our own pid can only be a lock this process still holds.
      if (Number.isInteger(pid) && (pid === process.pid || isAlive(pid))) throw new DataDirectoryBusyError(directory, pid);
      // The holder died without cleaning up: the lock is stale.
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Could not lock ${directory}.`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
