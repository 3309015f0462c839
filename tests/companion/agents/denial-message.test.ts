/**
 * What the model reads when the owner denies a call: the owner's reason is a sentence of its own,
 * ended with a full stop when the owner wrote none ("not now It was not run." ran on).
 */
import { describe, expect, it } from 'vitest';
import { declined } from '../../../companion/src/agents/tool-calls.js';

const denied = (reason: string | null) => declined('write_file', { decision: 'denied', reason });

describe("an owner's denial as the model reads it", () => {
  it('ends a reason without a full stop before the next sentence', () => {
    expect(denied('not now')).toBe('The owner denied the call to "write_file": not now. It was not run. Do not retry it; continue without it.');
  });

  it('keeps a reason that ends its own sentence as it is', () => {
    expect(denied('Not that file.')).toContain(': Not that file. It was not run.');
    expect(denied('Why would you?')).toContain(': Why would you? It was not run.');
    expect(denied('no (see "notes.md")')).toContain(': no (see "notes.md"). It was not run.');
    expect(denied('wait for me…')).toContain(': wait for me… It was not run.');
  });

  it('trims the reason, and reads a blank one as none', () => {
    expect(denied('  not now \n')).toContain(': not now. It was not run.');
    expect(denied('   ')).toBe('The owner denied the call to "write_file". It was not run. Do not retry it; continue without it.');
    expect(denied(null)).toBe('The owner denied the call to "write_file". It was not run. Do not retry it; continue without it.');
  });
});
