import { describe, expect, it } from 'vitest';
import { CpuWatch, ThreadFollower, threadsFor } from '../../../companion/src/inference/server/threads.js';

/** A /proc with two CPUs whose counters the test moves: `busy` and `nice` ticks of the machine, and our processes' ticks. */
function fakeProc() {
  const state = { user: 0, nice: 0, idle: 0, own: new Map<number, number>() };
  const read = (path: string): string => {
    if (path === '/proc/stat')
      return [`cpu  ${state.user} ${state.nice} 0 ${state.idle} 0 0 0 0 0 0`, 'cpu0 0 0 0 0 0 0 0 0 0 0', 'cpu1 0 0 0 0 0 0 0 0 0 0', 'intr 0'].join('\n');
    const pid = Number(/\/proc\/(\d+)\/stat/.exec(path)?.[1]);
    const ticks = state.own.get(pid);
    if (ticks === undefined) throw new Error('ENOENT');
    // pid (comm with a space) state ppid ... utime stime: utime is field 14, stime 15.
    return `${pid} (llama server) S 1 1 1 0 -1 4194304 0 0 0 0 ${ticks} 0 0 0 20 0 1 0`;
  };
  let now = 0;
  return { state, read, clock: () => now, advance: (ms: number) => (now += ms) };
}

/** Moves the fake machine on by `seconds` on its two CPUs, with `others` and `ours` cores busy and `niced` cores at low priority. */
function run(proc: ReturnType<typeof fakeProc>, seconds: number, load: { others?: number; ours?: number; niced?: number; pid?: number }) {
  const ticks = seconds * 100;
  const others = load.others ?? 0;
  const ours = load.ours ?? 0;
  const niced = load.niced ?? 0;
  proc.state.user += Math.round((others + ours) * ticks);
  proc.state.nice += Math.round(niced * ticks);
  proc.state.idle += Math.round((2 - others - ours - niced) * ticks);
  if (load.pid !== undefined) proc.state.own.set(load.pid, (proc.state.own.get(load.pid) ?? 0) + Math.round(ours * ticks));
  proc.advance(seconds * 1000);
}

describe('threads for a llama-server process', () => {
  it('takes every core on a quiet machine and leaves the cores other programs keep busy', () => {
    expect(threadsFor(2, 0)).toBe(2);
    expect(threadsFor(2, 0.3)).toBe(2);
    expect(threadsFor(2, 1)).toBe(1);
    expect(threadsFor(2, 5)).toBe(1);
    expect(threadsFor(8, 2.2)).toBe(6);
  });

  it('counts what other programs used, not our own processes and not programs at low priority', () => {
    const proc = fakeProc();
    const watch = new CpuWatch(() => [42], proc.read, proc.clock);
    expect(watch.othersOn(2)).toBeUndefined();
    watch.sample();
    // Our engine kept both cores busy, a niced build took what was left: nobody else is there.
    run(proc, 10, { ours: 1.5, niced: 0.5, pid: 42 });
    watch.sample();
    expect(watch.othersOn(2)).toBeCloseTo(0, 5);
    expect(threadsFor(2, watch.othersOn(2)!)).toBe(2);
    // One busy program beside an idle model.
    run(proc, 10, { others: 1 });
    watch.sample();
    run(proc, 10, { others: 1 });
    watch.sample();
    expect(watch.othersOn(2)).toBeCloseTo(2 / 3, 5);
    expect(watch.spanSeconds()).toBe(30);
  });

  it('forgets what is older than its window, so a busy moment does not decide for hours', () => {
    const proc = fakeProc();
    const watch = new CpuWatch(() => [], proc.read, proc.clock, 60_000);
    watch.sample();
    for (let i = 0; i < 6; i++) {
      run(proc, 10, { others: 2 });
      watch.sample();
    }
    expect(threadsFor(2, watch.othersOn(2)!)).toBe(1);
    for (let i = 0; i < 7; i++) {
      run(proc, 10, {});
      watch.sample();
    }
    expect(watch.othersOn(2)).toBeCloseTo(0, 5);
    expect(threadsFor(2, watch.othersOn(2)!)).toBe(2);
  });

  it('keeps an ended process of ours counted while the window holds its earlier figure', () => {
    const proc = fakeProc();
    const watch = new CpuWatch(() => [7], proc.read, proc.clock);
    run(proc, 1, { ours: 1, pid: 7 });
    watch.sample();
    run(proc, 10, { ours: 2, pid: 7 });
    watch.sample();
    proc.state.own.delete(7); // the process was restarted: its counters are gone
    run(proc, 10, {});
    watch.sample();
    expect(watch.othersOn(2)).toBeCloseTo(0, 5);
  });

  it('says nothing where /proc cannot be read', () => {
    const watch = new CpuWatch(
      () => [],
      () => {
        throw new Error('ENOENT');
      },
    );
    expect(watch.sample()).toBe(false);
    expect(watch.othersOn(4)).toBeUndefined();
  });

  it('reads this machine (Linux)', () => {
    let now = 0;
    const watch = new CpuWatch(
      () => [process.pid],
      undefined,
      () => now,
    );
    expect(watch.sample()).toBe(true);
    // Let the machine's counters move on (they tick 100 times a second).
    const started = process.cpuUsage();
    while (process.cpuUsage(started).user < 30_000) Math.sqrt(Math.random());
    now = 1000;
    expect(watch.sample()).toBe(true);
    const others = watch.othersOn(2)!;
    expect(others).toBeGreaterThanOrEqual(0);
    expect(others).toBeLessThanOrEqual(2);
  });
});

describe('an idle model following the machine', () => {
  it('restarts with a new count only when two looks agree, and not again soon after', () => {
    let others: number | undefined = 1;
    let now = 0;
    const follower = new ThreadFollower(2, { othersOn: () => others }, () => now, 300_000);
    expect(follower.look(1)).toBeUndefined(); // one busy program, one thread: as it should be
    others = 0;
    expect(follower.look(1)).toBeUndefined(); // quiet once: wait for a second look
    now += 30_000;
    expect(follower.look(1)).toBe(2);
    // The machine turns busy again right after: no restart within the interval.
    others = 1;
    now += 30_000;
    expect(follower.look(2)).toBeUndefined();
    now += 30_000;
    expect(follower.look(2)).toBeUndefined();
    now += 300_000;
    expect(follower.look(2)).toBeUndefined();
    now += 30_000;
    expect(follower.look(2)).toBe(1);
  });

  it('forgets a wish the machine did not keep, and keeps the count when nothing is known', () => {
    let others: number | undefined = 0;
    const follower = new ThreadFollower(2, { othersOn: () => others }, () => 0, 0);
    expect(follower.look(1)).toBeUndefined();
    others = 1;
    expect(follower.look(1)).toBeUndefined();
    others = 0;
    expect(follower.look(1)).toBeUndefined();
    others = undefined;
    expect(follower.look(1)).toBeUndefined();
    expect(follower.look(1)).toBeUndefined();
  });
});
