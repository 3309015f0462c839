import { closeSync, existsSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';

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
  return () => releasePidFile(file);
}

/** Lets go of a lock file taken with takePidFile. */
export function releasePidFile(file: string): void {
  held.delete(file);
  rmSync(file, { force: true });
}

/** The lock files this process took (a lock naming our pid that is not here is a previous life's). */
const held = new Set<string>();

/**
 * Takes a lock file that holds its owner's pid and start time: created exclusively, or taken over
 * when the process that wrote it is gone. Gone includes a process that died but is not yet reaped
 * (a zombie, for a moment after SIGKILL) and a pid now used by another process (a container
 * restarted: Hearth is pid 1 again), which the start time tells apart. Answers undefined when
 * taken, or the pid of the live holder.
 */
export function takePidFile(file: string, mode: number): number | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', mode);
      writeSync(fd, [process.pid, processStart(process.pid) ?? ''].join(' ').trim());
      closeSync(fd);
      held.add(file);
      return undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const [pidText, start] = readText(file).trim().split(/\s+/);
      const pid = Number.parseInt(pidText ?? '', 10);
      if (Number.isInteger(pid) && holderLives(file, pid, start)) return pid;
      // The holder died without cleaning up: the lock is stale.
      rmSync(file, { force: true });
    }
  }
  throw new Error(`Could not take the lock ${file}.`);
}

function holderLives(file: string, pid: number, start: string | undefined): boolean {
  if (pid === process.pid) return held.has(file);
  const stat = processStat(pid);
  // Without /proc (macOS, Windows) only whether the pid runs can be told.
  if (stat === null) return processAlive(pid);
  if (stat === undefined || stat.state === 'Z' || stat.state === 'X') return false;
  return !start || start === stat.start;
}

/** When a process started (clock ticks since boot, from /proc), or undefined where that cannot be read. */
function processStart(pid: number): string | undefined {
  return processStat(pid)?.start;
}

/**
 * A process's state letter and start time from /proc/<pid>/stat: undefined when no such process
 * runs, null when this system has no /proc to ask.
 */
function processStat(pid: number): { state: string; start: string } | undefined | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return null;
    return existsSync('/proc/self/stat') ? undefined : null;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after its last ')' are plain.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', start: fields[19] ?? '' };
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
