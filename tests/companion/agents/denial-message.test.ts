/**
 * What the model reads when the owner denies a call: the owner's reason is a sentence of its own,
 * ended with a full stop when the owner wrote none ("not now It was not run." ran on).
 */
import { describe, expect, it } from 'vitest';
import { declined } from '../../../companion/src/agents/tool-calls.js';

const denied = (reason: string | null) => declined('write_file', { decision: 'denied', reason });
/** The whole message with the reason as the model should read it. */
const withReason = (sentence: string) => `The owner denied the call to "write_file": ${sentence} It was not run. Do not retry it; continue without it.`;
const WITHOUT_REASON = 'The owner denied the call to "write_file". It was not run. Do not retry it; continue without it.';

describe("an owner's denial as the model reads it", () => {
  it('ends a reason without a full stop before the next sentence', () => {
    expect(denied('not now')).toBe(withReason('not now.'));
    expect(denied('no (see "notes.md")')).toBe(withReason('no (see "notes.md").'));
  });

  it('keeps a reason that ends its own sentence as it is', () => {
    for (const reason of ['Not that file.', 'Why would you?', 'wait for me…']) expect(denied(reason), reason).toBe(withReason(reason));
  });

  it('trims the reason, and reads a blank one as none', () => {
    expect(denied('  not now \n')).toBe(withReason('not now.'));
    for (const blank of ['   ', null]) expect(denied(blank), String(blank)).toBe(WITHOUT_REASON);
  });
});
