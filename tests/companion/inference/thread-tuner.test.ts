import { describe, expect, it } from 'vitest';
import { ThreadTuner } from '../../../companion/src/inference/in-process/thread-tuner.js';

/** A machine whose speed per thread count the test sets: decodes "take" what the table says. */
function machine(msPerToken: Record<number, number>) {
  const clock = { now: 0, load: 0 };
  const tuner = new ThreadTuner({ candidates: [1, 2], trialSteps: 3, minTrialGapMs: 1000, now: () => clock.now, load: () => clock.load });
  const step = (tokens: number) => {
    const threads = tuner.threadsFor(tokens);
    tuner.record({ tokens, threads, decodeMs: msPerToken[threads]! * tokens });
    clock.now += 10;
    return threads;
  };
  return { tuner, clock, step, speeds: msPerToken };
}

describe('ThreadTuner', () => {
  it('tries every candidate, then keeps the fastest for that batch size', () => {
    const { tuner, step } = machine({ 1: 2, 2: 3 });
    // Each candidate is visited for three steps at a time, the first of a visit not counted, until three are measured.
    const used = Array.from({ length: 18 }, () => step(1));
    expect(used.slice(0, 11)).toEqual([1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2]);
    expect(used.slice(11)).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(tuner.choices()).toEqual([{ tokens: '1', threads: 1, msPerToken: { 1: 2, 2: 3 }, trials: 1 }]);
  });

  it('chooses separately per batch size', () => {
    const speeds = { 1: 2, 2: 3 };
    const { tuner, step } = machine(speeds);
    for (let index = 0; index < 16; index++) step(1);
    // Eight-token batches run faster per token on two threads.
    const batch = (tokens: number) => {
      const threads = tuner.threadsFor(tokens);
      tuner.record({ tokens, threads, decodeMs: (threads === 2 ? 0.5 : 1) * tokens });
      return threads;
    };
    for (let index = 0; index < 16; index++) batch(8);
    expect(tuner.choices().map((choice) => [choice.tokens, choice.threads])).toEqual([
      ['1', 1],
      ['5-8', 2],
    ]);
  });

  it('stops trying a count once the median of three measured steps runs several times slower', () => {
    const { tuner, step } = machine({ 1: 1, 2: 40 });
    const used = Array.from({ length: 16 }, () => step(1));
    // Two visits: each one's first step not counted, then two measured steps and one.
    expect(used.filter((threads) => threads === 2)).toHaveLength(5);
    expect(tuner.choices()[0]).toMatchObject({ threads: 1, msPerToken: { 1: 1, 2: 40 } });
  });

  it('is not put off two threads by one slow step', () => {
    const clock = { now: 0, load: 0 };
    const tuner = new ThreadTuner({ candidates: [1, 2], trialSteps: 3, minTrialGapMs: 1000, now: () => clock.now, load: () => clock.load });
    const speeds: Record<number, number> = { 1: 2, 2: 1 };
    let twoThreadSteps = 0;
    for (let index = 0; index < 24; index++) {
      const threads = tuner.threadsFor(1);
      // The first measured step on two threads lands on a burst of other work: 40 times its usual time.
      const outlier = threads === 2 && ++twoThreadSteps === 2;
      tuner.record({ tokens: 1, threads, decodeMs: speeds[threads]! * (outlier ? 40 : 1) });
      clock.now += 10;
    }
    expect(tuner.choices()[0]).toMatchObject({ threads: 2, msPerToken: { 1: 2, 2: 1 } });
  });

  it('measures again after a number of steps even on a steady load, so a count that lost gets another chance', () => {
    const clock = { now: 0, load: 0 };
    const tuner = new ThreadTuner({ candidates: [1, 2], trialSteps: 3, retrialSteps: 200, minTrialGapMs: 1000, now: () => clock.now, load: () => clock.load });
    const speeds: Record<number, number> = { 1: 2, 2: 3 };
    const step = () => {
      const threads = tuner.threadsFor(1);
      tuner.record({ tokens: 1, threads, decodeMs: speeds[threads]! });
      clock.now += 10;
    };
    for (let index = 0; index < 20; index++) step();
    expect(tuner.choices()[0]).toMatchObject({ threads: 1, trials: 1 });
    // Two threads become faster while one thread keeps its speed and the load its level: nothing else would start a trial.
    speeds[2] = 1;
    for (let index = 0; index < 150; index++) step();
    expect(tuner.choices()[0]).toMatchObject({ threads: 1, trials: 1 });
    for (let index = 0; index < 100; index++) step();
    expect(tuner.choices()[0]).toMatchObject({ threads: 2, trials: 2 });
  });

  it('does not count its own decode threads in the load average as other work', () => {
    const { tuner, clock, step } = machine({ 1: 2, 2: 1 });
    for (let index = 0; index < 16; index++) step(1);
    expect(tuner.choices()[0]!.threads).toBe(2);
    // Running two decode threads alone raises the load average to about two.
    clock.load = 2.2;
    clock.now += 5000;
    for (let index = 0; index < 16; index++) step(1);
    expect(tuner.choices()[0]).toMatchObject({ threads: 2, trials: 2, msPerToken: { 1: 2, 2: 1 } });
  });

  it('measures again when the load changes, and follows the faster count', () => {
    const { tuner, clock, step, speeds } = machine({ 1: 2, 2: 3 });
    for (let index = 0; index < 16; index++) step(1);
    expect(tuner.choices()[0]!.threads).toBe(1);
    // Another program stops: two threads become the faster choice, and the load average falls.
    speeds[2] = 1;
    clock.now += 5000;
    clock.load = 1;
    for (let index = 0; index < 16; index++) step(1);
    expect(tuner.choices()[0]).toMatchObject({ threads: 2, trials: 2 });
  });

  it('measures again when the chosen count runs clearly slower than it measured', () => {
    const { tuner, clock, step, speeds } = machine({ 1: 2, 2: 3 });
    for (let index = 0; index < 12; index++) step(1);
    speeds[1] = 6;
    clock.now += 5000;
    for (let index = 0; index < 40; index++) step(1);
    expect(tuner.choices()[0]).toMatchObject({ threads: 2 });
    expect(tuner.choices()[0]!.trials).toBeGreaterThanOrEqual(2);
  });

  it('keeps fewer threads when more threads are only slightly faster', () => {
    const { tuner, step } = machine({ 1: 2.6, 2: 2.5 });
    for (let index = 0; index < 16; index++) step(1);
    expect(tuner.choices()[0]).toMatchObject({ threads: 1, msPerToken: { 1: 2.6, 2: 2.5 } });
  });

  it('never keeps a count that measured clearly slower than another in the same trial', () => {
    const { tuner, clock, step, speeds } = machine({ 1: 2, 2: 3 });
    const kept: number[] = [];
    for (let round = 0; round < 5; round++) {
      speeds[1] = round % 2 ? 4 : 2;
      clock.now += 5000;
      clock.load = round;
      for (let index = 0; index < 16; index++) step(1);
      const [choice] = tuner.choices();
      const measured = choice!.msPerToken;
      expect(measured[choice!.threads]).toBeLessThanOrEqual(Math.min(...Object.values(measured)) * 1.25);
      // Two threads only when this trial measured them clearly faster than one; else the fewer threads.
      expect(choice!.threads, `round ${round}`).toBe(measured[2] !== undefined && measured[1]! > measured[2] * 1.25 ? 2 : 1);
      kept.push(choice!.threads);
    }
    // One thread slower in round 1 only; from round 3 on, the load leaves no core for a second thread to be tried.
    expect(kept).toEqual([1, 2, 1, 1, 1]);
  });

  it('does not try more threads than the cores other work leaves free', () => {
    const { tuner, clock, step } = machine({ 1: 2, 2: 1 });
    // Three other busy programs on two cores (the load average counts this process's own thread too).
    clock.load = 4;
    const busy = Array.from({ length: 12 }, () => step(1));
    expect(busy).toEqual(Array.from({ length: 12 }, () => 1));
    // Once they finish, the next trial includes two threads, and two are faster here.
    clock.load = 1;
    clock.now += 5000;
    for (let index = 0; index < 16; index++) step(1);
    expect(tuner.choices()[0]!.threads).toBe(2);
  });

  it("judges a step by its whole time, not counting the first step of a visit, which carries the previous count's leftovers", () => {
    // Two threads decode faster, but the event loop waits during their decode and catches up in the
    // next step; with one thread that work overlaps the decode.
    const clock = { now: 0, load: 0 };
    const tuner = new ThreadTuner({ candidates: [1, 2], trialSteps: 3, minTrialGapMs: 1000, now: () => clock.now, load: () => clock.load });
    const decode = { 1: 2, 2: 1.2 } as Record<number, number>;
    let previous = 1;
    for (let index = 0; index < 24; index++) {
      const threads = tuner.threadsFor(1);
      tuner.record({ tokens: 1, threads, decodeMs: decode[threads]!, stepMs: decode[threads]! + (previous === 2 ? 2 : 0.5) });
      previous = threads;
      clock.now += 10;
    }
    expect(tuner.choices()[0]).toMatchObject({ threads: 1, msPerToken: { 1: 2.5, 2: 3.2 } });
  });

  it('with one candidate never measures', () => {
    const tuner = new ThreadTuner({ candidates: [4] });
    expect(tuner.threadsFor(1)).toBe(4);
    expect(tuner.maxThreads).toBe(4);
  });
});
