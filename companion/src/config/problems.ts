/**
 * Configuration problems in words a person can act on: what a setting accepts (the allowed
 * values, the range, the form), never the validator's own phrases ("must match a schema in
 * anyOf"); and, for config.yaml itself, the line and a few lines of the file around it.
 */
import type { ErrorObject } from 'ajv';
import { LineCounter, parseDocument } from 'yaml';
import { redact } from '../redaction.js';
import { formInWords, pointerToPath, problemAt, rangeInWords, schemaMessage, typesInWords, valuesInWords } from '../schema-messages.js';

type Schema = Record<string, unknown>;

/** What a schema accepts, as words that follow "must be": its values, its type with its whole range, or its form. */
export function accepted(schema: Schema): string {
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return valuesInWords(schema.enum);
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Schema[]).map(accepted).join(' or ');
  switch (schema.type) {
    case 'integer':
    case 'number': {
      const range = rangeInWords(schema);
      const span = schema.minimum !== undefined && schema.maximum !== undefined;
      return `${typesInWords(schema.type, 'yaml')}${!range ? '' : span ? ` ${range}` : ` (${range})`}`;
    }
    case 'boolean':
    case 'array':
    case 'object':
      return typesInWords(schema.type, 'yaml');
    case 'string':
      return typeof schema.pattern === 'string'
        ? (formInWords(schema.pattern, schema.description) ?? 'text of the expected form')
        : typesInWords('string', 'yaml');
    default:
      return 'a valid value';
  }
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** One sentence per problem (`path: what it must be`), one per setting, for Ajv's errors (run with verbose). */
export function describeSchemaErrors(errors: ErrorObject[]): string[] {
  // An anyOf describes its value as a whole: its branches' own errors at the same place are not repeated.
  const alternatives = errors.filter((error) => error.keyword === 'anyOf');
  const inBranch = (error: ErrorObject) =>
    alternatives.some((anyOf) => anyOf !== error && anyOf.instancePath === error.instancePath && error.schemaPath.startsWith(`${anyOf.schemaPath}/`));
  const lines: string[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (inBranch(error) || error.keyword === 'if') continue;
    const line = describe(error);
    const place = line.slice(0, line.indexOf(': '));
    if (seen.has(place)) continue;
    seen.add(place);
    lines.push(line);
  }
  return lines;
}

function describe(error: ErrorObject): string {
  const path = pointerToPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const parent = (error.parentSchema ?? {}) as Schema;
  // A key of a mapping whose keys are constrained (environment variable names, header names).
  if (typeof params.propertyName === 'string' && error.keyword !== 'propertyNames') {
    return `${path}: the key "${params.propertyName}" is not allowed; keys must be ${accepted(parent)}`;
  }
  switch (error.keyword) {
    case 'additionalProperties': {
      const key = String(params.additionalProperty);
      const known = Object.keys((parent.properties ?? {}) as Schema);
      const near = known.find((name) => closeSpelling(name, key));
      return `${join(path, key)}: unknown key${near ? ` (did you mean ${near}?)` : known.length ? `; the keys here are ${known.join(', ')}` : ''}`;
    }
    case 'required': {
      const missing = problemAt(error);
      return `${missing.path}: ${missing.message}`;
    }
    case 'const':
      if (path === 'version') return 'version: must be 1';
      return `${path || '(document)'}: must be ${accepted(parent)}`;
    // Lengths and counts read the same wherever they are told.
    case 'minLength':
    case 'maxLength':
    case 'minProperties':
    case 'minItems':
    case 'uniqueItems':
      return `${path}: ${schemaMessage(error)}`;
    case 'not':
      return `${path}: must not be ${accepted((parent.not ?? {}) as Schema)}`;
    case 'propertyNames':
      return `${path}: the key "${String(params.propertyName)}" is not allowed; keys must be ${accepted({ type: 'string', ...((parent.propertyNames ?? {}) as Schema) })}`;
    default:
      return `${path || '(document)'}: must be ${accepted(parent)}`;
  }
}

/** Two keys one typo apart (a letter missing, added, changed or two swapped), or the same but for case. */
function closeSpelling(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (x === y) return true;
  if (Math.abs(x.length - y.length) > 1) return false;
  let i = 0;
  while (i < x.length && x[i] === y[i]) i++;
  const swapped = x[i] === y[i + 1] && x[i + 1] === y[i] && x.slice(i + 2) === y.slice(i + 2);
  return swapped || x.slice(i + 1) === y.slice(i + 1) || x.slice(i) === y.slice(i + 1) || x.slice(i + 1) === y.slice(i);
}

/** `providers[0].name` -> ['providers', 0, 'name']. */
function segments(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) => (match[2] !== undefined ? Number(match[2]) : match[1]!));
}

/**
 * Problems of config.yaml with where they are: each `path: message` gets the line of the
 * setting (or of the nearest part of it the file has) and the lines around it.
 */
export function locateProblems(text: string, problems: string[]): string[] {
  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter });
  const lines = text.replace(/\n$/, '').split('\n');
  const located = problems.map((problem) => {
    const colon = problem.indexOf(': ');
    const path = colon < 0 ? [] : segments(problem.slice(0, colon));
    const offset = where(document, path, problem.slice(colon + 2).startsWith('unknown key'));
    if (offset === undefined) return { problem, line: 0 };
    const { line, col } = lineCounter.linePos(offset);
    return { problem: `${problem} (line ${line})\n${frame(lines, line, col)}`, line };
  });
  // In the order of the file.
  return located.sort((a, b) => a.line - b.line).map((entry) => entry.problem);
}

interface Ranged {
  range?: [number, number, number];
  items?: { key?: { value?: unknown; range?: [number, number, number] } }[];
}

/** Where a path is in the file: its key (for an unknown key) or its value, else the deepest part of the path there is. */
function where(document: ReturnType<typeof parseDocument>, path: (string | number)[], atKey: boolean): number | undefined {
  for (let depth = path.length; depth > 0; depth--) {
    const parent = document.getIn(path.slice(0, depth - 1), true) as Ranged | undefined;
    const key = parent?.items?.find((item) => item.key?.value === path[depth - 1])?.key;
    const value = document.getIn(path.slice(0, depth), true) as Ranged | undefined;
    const found = atKey && depth === path.length ? (key?.range ?? value?.range) : (value?.range ?? key?.range);
    if (found) return found[0];
  }
  return undefined;
}

/** A key whose value is a credential: a frame never shows that value (a key pasted into config.yaml by mistake). */
const SECRET_KEY = /^(\s*(?:-\s+)?["']?[\w.-]*(?:key|token|secret|password|passphrase|credential|authorization|cookie)[\w.-]*["']?\s*:\s*)(\S.*)$/i;

/** The line and one on either side, numbered, with a caret under the column; credentials' values hidden. */
export function frame(lines: string[], line: number, col: number): string {
  const first = Math.max(1, line - 1);
  const last = Math.min(lines.length, line + 1);
  const width = String(last).length;
  const out: string[] = [];
  for (let number = first; number <= last; number++) {
    const shown = redact(
      (lines[number - 1] ?? '').replace(SECRET_KEY, (_all, key: string, value: string) => (/^(secret|env):/.test(value) ? `${key}${value}` : `${key}[hidden]`)),
    );
    out.push(`    ${number === line ? '>' : ' '} ${String(number).padStart(width)} | ${shown}`);
    if (number === line) out.push(`      ${' '.repeat(width)} | ${' '.repeat(Math.max(0, col - 1))}^`);
  }
  return out.join('\n');
}
