import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';

/**
 * Each shell call's processes carry `HEARTH_TOOL_CALL=<marker>` in their environment, which every
 * descendant inherits: one that leaves the process group (`setsid`, a double-forking daemon)
 * is still found by scanning `/proc/<pid>/environ`. A process that clears its own environment
 * before leaving the group escapes this; the shell tool is not a sandbox.
 */
export const MARKER_VARIABLE = 'HEARTH_TOOL_CALL';

/** How many scan-and-kill rounds an end makes at most (a round catches what forked during the last). */
const ROUNDS = 20;
/** Environment files read at once during a scan. */
const PARALLEL_READS = 32;

/** Where a shell call's marker is recorded while it runs, so a later start can end what a crash left. */
export interface ProcessLedger {
  started(marker: string): void;
  ended(marker: string): void;
}

export function newMarker(): string {
  return `tc_${randomBytes(12).toString('hex')}`;
}

/** The processes (other than this one) whose environment carries one of `markers`. */
export async function markedProcesses(markers: ReadonlySet<string>): Promise<number[]> {
  if (markers.size === 0) return [];
  let entries: string[];
  try {
    entries = await readdir('/proc');
  } catch {
    return []; // No /proc: only the process group is ended.
  }
  const pids = entries.filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  const found: number[] = [];
  const prefix = `${MARKER_VARIABLE}=`;
  for (let start = 0; start < pids.length; start += PARALLEL_READS) {
    await Promise.all(
      pids.slice(start, start + PARALLEL_READS).map(async (pid) => {
        let environ: string;
        try {
          environ = await readFile(`/proc/${pid}/environ`, 'latin1');
        } catch {
          return; // Gone, or another user's.
        }
        for (const entry of environ.split('\0'))
          if (entry.startsWith(prefix) && markers.has(entry.slice(prefix.length))) {
            found.push(Number(pid));
            return;
          }
      }),
    );
  }
  return found;
}

/** Kills every process carrying one of `markers`, again until a scan finds none; answers how many processes were killed. */
export async function endMarked(markers: Iterable<string>): Promise<number> {
  const wanted = new Set(markers);
  const killed = new Set<number>();
  for (let round = 0; round < ROUNDS; round++) {
    const pids = await markedProcesses(wanted);
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed.add(pid);
      } catch {
        // Gone meanwhile.
      }
    }
  }
  return killed.size;
}

/** SIGKILL to a whole process group; a group already gone is fine. */
export function killGroup(pid: number | undefined): void {
  if (!pid) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // The group is gone already.
  }
}
