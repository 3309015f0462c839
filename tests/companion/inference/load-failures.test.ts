import { describe, expect, it } from 'vitest';
import { LoadFailures } from '../../../companion/src/inference/load-failures.js';

/* Load failures: one that may pass is tried again after a back-off that doubles; the owner's Load always tries again. */

const info = { id: 'm', path: '/models/m.gguf', sizeBytes: 100 };

describe('LoadFailures', () => {
  it('forgets a failure that may pass after a back-off that doubles with each repeat', () => {
    let now = 0;
    const failures = new LoadFailures(() => now);
    failures.remember(info, 'kept crashing', { passing: true });
    expect(failures.message(info)).toBe('kept crashing');
    now += 60_000;
    expect(failures.message(info)).toBeUndefined();
    failures.remember(info, 'kept crashing again', { passing: true });
    now += 60_000;
    expect(failures.message(info)).toBe('kept crashing again');
    now += 60_000;
    expect(failures.message(info)).toBeUndefined();
    // A load that works starts the back-off over.
    failures.loaded('m');
    failures.remember(info, 'once more', { passing: true });
    now += 60_000;
    expect(failures.message(info)).toBeUndefined();
  });

  it('keeps a failure of the file itself while the file is unchanged, until the owner loads it', () => {
    let now = 0;
    const failures = new LoadFailures(() => now);
    failures.remember(info, 'not a GGUF file');
    now += 86_400_000;
    expect(failures.message(info)).toBe('not a GGUF file');
    expect(failures.message({ ...info, sizeBytes: 101 })).toBeUndefined();
    failures.forget('m');
    expect(failures.message(info)).toBeUndefined();
  });
});
