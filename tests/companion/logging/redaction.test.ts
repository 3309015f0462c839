import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { redact, redactingLogMethod, rememberSecret } from '../../../companion/src/redaction.js';

describe('the one redaction', () => {
  it('removes named and remembered secrets and credential-shaped text', () => {
    rememberSecret('remembered-value-123456');
    const text = redact('a named-secret-9876 and remembered-value-123456; Authorization: Bearer abcdefgh12345678; key hth_abcdefghijkl', ['named-secret-9876']);
    expect(text).toBe('a [redacted] and [redacted]; Authorization: Bearer [redacted]; key [redacted]');
  });

  it('is applied by the log hook to every argument, errors and their causes included', () => {
    rememberSecret('logged-secret-abcdef');
    let output = '';
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        output += chunk.toString();
        done();
      },
    });
    const log = pino({ hooks: { logMethod: redactingLogMethod } }, sink);
    const error = new Error('service said logged-secret-abcdef', { cause: new Error('because logged-secret-abcdef') });
    log.warn({ err: error, detail: { nested: ['logged-secret-abcdef'] } }, 'failed: logged-secret-abcdef');
    log.child({ request: 1 }).error('child logged-secret-abcdef');
    expect(output).not.toContain('logged-secret-abcdef');
    expect(output.match(/\[redacted\]/g)?.length).toBeGreaterThanOrEqual(5);
    expect(output).toContain('service said [redacted]');
  });
});
