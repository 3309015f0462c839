import { describe, expect, it } from 'vitest';
import { BatchSteps } from '../../../companion/src/inference/in-process/batch-steps.js';
import { secondsUntilFirstFree } from '../../../companion/src/inference/waiting-line.js';
import { defaultParallel } from '../../../companion/src/inference/parallel.js';

const MiB = 2 ** 20;
const GiB = 2 ** 30;

/** Running requests as [tokens generated, token limit]. */
const running = (...requests: [number, number][]) => requests.map(([generated, limit]) => ({ generated, limit }));

describe('Retry-After for a full queue', () => {
  it('is the time until the running request nearest its end finishes', () => {
    // 20 ms per step; one request 100 tokens from its limit, one 10: the second frees first.
    expect(secondsUntilFirstFree(running([0, 100], [490, 500]), 20, undefined)).toBe(1);
    expect(secondsUntilFirstFree(running([0, 1000], [0, 400]), 20, undefined)).toBe(8);
  });

  it('expects a request to stop at the typical completion length when that comes before its limit', () => {
    expect(secondsUntilFirstFree([{ generated: 50, limit: 4096 }], 100, 150)).toBe(10);
  });

  it('says one second before any step was measured', () => {
    expect(secondsUntilFirstFree([{ generated: 0, limit: 4096 }], undefined, undefined)).toBe(1);
  });

  it('measures the step interval while busy and ignores idle gaps', () => {
    let now = 0;
    const steps = new BatchSteps(() => now);
    const step = { sequenceIds: [0], tokens: 1, threads: 1, decodeMs: 1 };
    for (let index = 0; index < 5; index++) {
      now += 20;
      steps.record(step);
    }
    now += 60_000;
    steps.record(step);
    expect(steps.stepMs).toBe(20);
    expect(steps.count).toBe(6);
  });
});

describe('the default sequence count', () => {
  it('fits the KV caches in half the memory left', () => {
    expect(defaultParallel({ bytesPerSequence: 512 * MiB, availableBytes: 8 * GiB, gpu: false, cores: 8 })).toBe(8);
    expect(defaultParallel({ bytesPerSequence: 512 * MiB, availableBytes: 2 * GiB, gpu: false, cores: 8 })).toBe(2);
  });

  it('is at least one, even when memory is short', () => {
    expect(defaultParallel({ bytesPerSequence: GiB, availableBytes: 0, gpu: false, cores: 2 })).toBe(1);
  });

  it('stops where more streams stop paying: 32 on a GPU, 8 per core and at most 16 on a CPU', () => {
    const plenty = { bytesPerSequence: MiB, availableBytes: 64 * GiB };
    expect(defaultParallel({ ...plenty, gpu: true, cores: 2 })).toBe(32);
    expect(defaultParallel({ ...plenty, gpu: false, cores: 2 })).toBe(16);
    expect(defaultParallel({ ...plenty, gpu: false, cores: 1 })).toBe(8);
  });
});
