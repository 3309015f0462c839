import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../../companion/src/errors.js';
import { MEDIA_JOB_FAILURES, RUN_FAILURES, isRunFailureCode, mediaFailure, runFailure } from '../../../companion/src/failures.js';
import { ERROR_CODES, type ErrorCode } from '#shared/api/errors.js';
import { MEDIA_JOB_FAILURE_CODES, RUN_FAILURE_CODES } from '#shared/api/failures.js';

/*
 * Every code a client can receive is explained in docs/errors.md: each HTTP error code of the
 * error table (with its status), each run failure code and each media job failure code, one row
 * each, under its own heading. A code added to a table without its row fails here, with the row
 * to write; a row for a code that no longer exists fails too.
 */

const DOCS = fileURLToPath(new URL('../../../docs/errors.md', import.meta.url));

interface Row {
  code: string;
  cells: string[];
  line: number;
}

/** The `| \`code\` | … |` rows under each `## ` heading of docs/errors.md. */
function sections(): Map<string, Row[]> {
  const found = new Map<string, Row[]>();
  let section = '';
  for (const [index, text] of readFileSync(DOCS, 'utf8').split('\n').entries()) {
    if (text.startsWith('## ')) found.set((section = text.slice(3).trim()), []);
    const match = /^\| `([a-z0-9_]+)` \|(.*)\|$/.exec(text);
    if (match && section) found.get(section)!.push({ code: match[1]!, cells: match[2]!.split(' | ').map((cell) => cell.trim()), line: index + 1 });
  }
  return found;
}

function compare(section: string, codes: readonly string[], row: (code: string) => string): string[] {
  const rows = sections().get(section);
  if (!rows) return [`docs/errors.md has no "## ${section}" section.`];
  const problems: string[] = [];
  for (const code of codes)
    if (!rows.some((entry) => entry.code === code)) problems.push(`docs/errors.md has no row for ${code} under "## ${section}". Add: ${row(code)}`);
  for (const entry of rows) {
    if (!codes.includes(entry.code))
      problems.push(`docs/errors.md:${entry.line} documents ${entry.code}, which is not in this table of codes: remove the row or fix it.`);
    if (entry.cells.some((cell) => cell.length === 0)) problems.push(`docs/errors.md:${entry.line} (${entry.code}) has an empty cell.`);
    if (rows.filter((other) => other.code === entry.code).length > 1) problems.push(`docs/errors.md:${entry.line} documents ${entry.code} a second time.`);
  }
  return problems;
}

describe('docs/errors.md', () => {
  it('explains every HTTP error code, with the status the error table gives it', () => {
    const problems = compare('HTTP errors', ERROR_CODES, (code) => `| \`${code}\` | ${ERRORS[code as ErrorCode].status} | <what it means> | <what to do> |`);
    for (const entry of sections().get('HTTP errors') ?? []) {
      const known = ERRORS[entry.code as keyof typeof ERRORS];
      if (known && entry.cells[0] !== String(known.status))
        problems.push(`docs/errors.md:${entry.line} gives ${entry.code} the status ${entry.cells[0]}; the error table says ${known.status}.`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('explains every run failure code', () => {
    const problems = compare('Run failures', RUN_FAILURE_CODES, (code) => `| \`${code}\` | <what it means> | <what to do> |`);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('explains every media job failure code', () => {
    const problems = compare('Media job failures', MEDIA_JOB_FAILURE_CODES, (code) => `| \`${code}\` | <what it means> | <what to do> |`);
    expect(problems, problems.join('\n')).toEqual([]);
  });
});

describe('the failure table', () => {
  it('has words for every code, and fills them in when the thrower gives none', () => {
    expect(Object.keys(RUN_FAILURES).sort()).toEqual([...RUN_FAILURE_CODES].sort());
    expect(Object.keys(MEDIA_JOB_FAILURES).sort()).toEqual([...MEDIA_JOB_FAILURE_CODES].sort());
    expect(runFailure('remote_error')).toEqual({ code: 'remote_error', message: 'The run failed on the host.' });
    expect(runFailure('model_not_found')).toEqual({ code: 'model_not_found', message: ERRORS.model_not_found.message });
    expect(runFailure('interrupted', 'Stopped.')).toEqual({ code: 'interrupted', message: 'Stopped.' });
    expect(mediaFailure('expired')).toEqual({ code: 'expired', message: "The provider's copy expired before it could be downloaded." });
  });

  it('knows run codes from both tables, and nothing else', () => {
    for (const code of [...RUN_FAILURE_CODES, ...ERROR_CODES]) expect(isRunFailureCode(code), code).toBe(true);
    for (const code of ['model_error', 'cloud_task_completed', 'cloud_task_canceled', 'provider_failed', '']) expect(isRunFailureCode(code), code).toBe(false);
  });
});
