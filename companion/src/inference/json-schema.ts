import type { GbnfJsonSchema } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import { checkReferences, type References } from './json-schema-references.js';
import { hasLoneSurrogate } from './surrogates.js';
import type { JsonSchema } from '#shared/api/openai.js';

/**
 * What a grammar is built from at most, checked before any grammar is: how deep a schema nests
 * (node-llama-cpp stops at 512 scopes, with a 500); each length or count (llama.cpp refuses 2000
 * copies of a repeated rule, and a string's character is two, so a minLength of 1000 failed); and
 * all lengths and counts together, since each one is spelled out in the grammar.
 */
export const SCHEMA_LIMITS = { depth: 64, count: 999, counts: 50_000 } as const;

/** Keywords that describe or annotate but do not constrain what the grammar must produce. */
const ANNOTATIONS = new Set([
  'title',
  'description',
  'default',
  'examples',
  '$schema',
  '$id',
  '$comment',
  'strict',
  'readOnly',
  'writeOnly',
  'deprecated',
  // Value constraints a grammar cannot enforce token by token; the structure still is.
  'pattern',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'uniqueItems',
]);

const TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'object', 'array']);
const FORMATS = new Set(['date-time', 'time', 'date']);

/**
 * Converts a client's JSON Schema into the subset node-llama-cpp turns into a grammar.
 * Anything the grammar could not enforce is refused with a 400 naming where it sits, so an
 * answer that claims to follow a schema always does.
 */
export function toGrammarSchema(schema: unknown, param: string): GbnfJsonSchema {
  const walk: Walk = { depth: 0, scope: new Map(), counted: { total: 0 }, references: { definitions: new Map(), targets: new WeakMap() } };
  const converted = convert(schema, param, walk);
  checkReferences(converted, walk.references, refuse);
  return converted as GbnfJsonSchema;
}

/** Where the conversion is: how deep, which definitions a `$ref` here may name (name -> its path), the counts so far. */
interface Walk {
  depth: number;
  scope: ReadonlyMap<string, string>;
  counted: { total: number };
  references: References;
}

/** The walk one level down, where this node's own `$defs` join those in scope (as node-llama-cpp resolves them). */
function below(walk: Walk, node: JsonSchema, path: string): Walk {
  const scope = new Map(walk.scope);
  for (const key of ['definitions', '$defs']) {
    const defs = node[key];
    if (isObject(defs)) for (const name of Object.keys(defs)) scope.set(name, `${path}.${key}.${name}`);
  }
  return { ...walk, depth: walk.depth + 1, scope };
}

function convert(node: unknown, path: string, outer: Walk): Record<string, unknown> {
  if (node === true || (isObject(node) && Object.keys(node).length === 0)) return ANY_JSON;
  if (!isObject(node)) refuse(path, 'must be a JSON Schema object');
  if (outer.depth >= SCHEMA_LIMITS.depth) refuse(path, `nests deeper than ${SCHEMA_LIMITS.depth} levels, more than a grammar is built for`);
  const walk = below(outer, node, path);
  const child = (value: unknown, at: string) => convert(value, at, walk);
  const out: Record<string, unknown> = {};
  /** Keywords whose meaning depends on others: applied once every keyword is read. */
  const later: { tuple?: boolean; closed?: boolean; additionalItems?: unknown; propertyNames?: unknown } = {};
  for (const [key, value] of Object.entries(node)) {
    const at = `${path}.${key}`;
    switch (key) {
      case 'type': {
        const list = Array.isArray(value) ? value : [value];
        if (list.length === 0 || !list.every((t) => typeof t === 'string' && TYPES.has(t))) refuse(at, 'has an unknown type');
        out.type = value;
        break;
      }
      case 'properties': {
        if (!isObject(value)) refuse(at, 'must be an object');
        out.properties = Object.fromEntries(
          Object.entries(value).map(([name, schema]) => [checkedText(name, `${at}.${name}`), child(schema, `${at}.${name}`)]),
        );
        break;
      }
      case 'items':
        // Draft-07 tuples list their items; 2020-12 closes a tuple with `items: false`.
        if (Array.isArray(value)) {
          out.prefixItems = value.map((schema, index) => child(schema, `${at}[${index}]`));
          later.tuple = true;
        } else if (value === false) later.closed = true;
        else if (value !== true) out.items = child(value, at);
        break;
      case 'additionalItems':
        later.additionalItems = value;
        break;
      case 'propertyNames':
        later.propertyNames = value;
        break;
      case 'prefixItems':
        if (!Array.isArray(value)) refuse(at, 'must be an array');
        out.prefixItems = value.map((schema, index) => child(schema, `${at}[${index}]`));
        break;
      case 'additionalProperties':
        out.additionalProperties = typeof value === 'boolean' ? value : child(value, at);
        break;
      case 'anyOf':
      case 'oneOf':
        if (!Array.isArray(value) || value.length === 0) refuse(at, 'must be a non-empty array');
        out.oneOf = value.map((schema, index) => child(schema, `${at}[${index}]`));
        break;
      case 'allOf':
        // Every member must hold. zod writes two checks of one string (two `pattern`s) as allOf:
        // members that only annotate, or check what a grammar ignores anyway, add nothing. A
        // member that constrains the value (a type, properties, a length) is refused.
        if (!Array.isArray(value) || value.length === 0) refuse(at, 'must be a non-empty array');
        value.forEach((member: unknown, index) => {
          if (member === true || (isObject(member) && Object.keys(member).length === 0)) return;
          const converted = child(member, `${at}[${index}]`);
          if (Object.keys(converted).some((name) => name !== 'description'))
            refuse(
              `${at}[${index}]`,
              'constrains the value, and Hearth builds no grammar for allOf: only members that annotate or check what a grammar ignores (pattern, minimum, ...) are taken',
            );
        });
        break;
      case '$defs':
      case 'definitions': {
        if (!isObject(value)) refuse(at, 'must be an object');
        const defs = Object.entries(value).map(([name, schema]) => {
          const converted = child(schema, `${at}.${name}`);
          walk.references.definitions.set(`${at}.${name}`, converted);
          return [name, converted] as const;
        });
        // Both spellings in one schema: node-llama-cpp reads $defs, so they are put together there.
        out.$defs = { ...(out.$defs as object | undefined), ...Object.fromEntries(defs) };
        break;
      }
      case '$ref': {
        const name = typeof value === 'string' ? /^#\/(?:\$defs|definitions)\/([^/]+)$/.exec(value)?.[1] : undefined;
        if (name === undefined) refuse(at, 'must point into #/$defs');
        const target = walk.scope.get(name);
        if (target === undefined) refuse(at, `names the definition "${name}", which no $defs or definitions of this schema holds`);
        out.$ref = `#/$defs/${name}`;
        walk.references.targets.set(out, { target, name, path: at });
        break;
      }
      case 'format':
        // Formats the grammar knows are enforced; others (email, uri, ...) stay plain strings.
        if (typeof value === 'string' && FORMATS.has(value)) out.format = value;
        break;
      case 'enum':
        if (!Array.isArray(value) || value.length === 0)
          refuse(at, 'must list at least one value (an empty enum allows nothing, so no answer could follow the schema)');
        out.enum = value.map((item, index) => checkedLiteral(item, `${at}[${index}]`));
        break;
      case 'const':
        out.const = checkedLiteral(value, at);
        break;
      case 'required':
        if (!Array.isArray(value) || !value.every((name) => typeof name === 'string')) refuse(at, 'must list property names');
        out.required = value;
        break;
      // Lengths and counts: each one a repetition in the grammar.
      case 'minLength':
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
      case 'minProperties':
      case 'maxProperties':
        // A maximum beyond what a grammar spells out is left to the reply's own limit (max_tokens):
        // tools say "at most 524,288 characters" to mean "no practical limit" (Claude Code's do),
        // and a request is not refused for a bound no ordinary reply reaches. A minimum must hold.
        if (key.startsWith('max') && typeof value === 'number' && Number.isInteger(value) && value > SCHEMA_LIMITS.count) break;
        out[key] = checkedCount(value, at, walk.counted);
        break;
      default:
        if (!ANNOTATIONS.has(key)) refuse(at, `uses "${key}", which Hearth cannot enforce with a grammar`);
        if (key === 'description' && typeof value === 'string') out.description = value;
    }
  }
  closeTuple(out, later, path, walk);
  if (later.propertyNames !== undefined) limitKeys(out, propertyNamesOf(later.propertyNames, `${path}.propertyNames`));
  // Only declared properties are generated: an object schema without additionalProperties would
  // otherwise let a weak model wander into keys nobody asked for.
  if (out.type === 'object' && out.additionalProperties === undefined) out.additionalProperties = out.properties === undefined;
  if (out.type === undefined && out.properties !== undefined) out.type = 'object';
  return out;
}

/** An `enum` or `const` value the grammar can spell: a string, a number, a boolean or null (node-llama-cpp takes no others). */
function checkedLiteral(value: unknown, path: string): unknown {
  if (typeof value === 'string') return checkedText(value, path);
  if (value === null || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))) return value;
  refuse(path, `is ${Array.isArray(value) ? 'an array' : 'an object'}; a grammar takes only strings, numbers, booleans and null as enum or const values`);
}

/** Text that becomes part of the grammar: half a surrogate pair is no character a model can write. */
function checkedText(text: string, path: string): string {
  if (hasLoneSurrogate(text)) refuse(path, 'holds half of a UTF-16 surrogate pair (\\ud800-\\udfff alone), which is not text');
  return text;
}

/** A length or count: a whole number within SCHEMA_LIMITS.count, added to the schema's total. */
function checkedCount(value: unknown, path: string, counted: { total: number }): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) refuse(path, 'must be a whole number of 0 or more');
  if (value > SCHEMA_LIMITS.count) refuse(path, `is ${value}; a grammar enforces lengths and counts up to ${SCHEMA_LIMITS.count}`);
  counted.total += value;
  if (counted.total > SCHEMA_LIMITS.counts)
    refuse(path, `brings the schema's lengths and counts to more than ${SCHEMA_LIMITS.counts} together, more than a grammar is built for`);
  return value;
}

/**
 * Tuples: draft-07 `items: [...]` with `additionalItems` (false: closed; a schema: the rest), and
 * 2020-12 `prefixItems` with `items: false` (closed). A closed tuple gets maxItems = its length.
 */
function closeTuple(out: Record<string, unknown>, later: { tuple?: boolean; closed?: boolean; additionalItems?: unknown }, path: string, walk: Walk): void {
  const length = Array.isArray(out.prefixItems) ? out.prefixItems.length : 0;
  const close = () => {
    out.maxItems = typeof out.maxItems === 'number' ? Math.min(out.maxItems, length) : length;
    delete out.items;
  };
  if (later.closed) close();
  // additionalItems only means something beside the array form of items.
  if (!later.tuple || later.additionalItems === undefined || later.additionalItems === true) return;
  if (later.additionalItems === false) close();
  else out.items = convert(later.additionalItems, `${path}.additionalItems`, walk);
}

/**
 * `propertyNames`: every JSON key is a string, so `{"type": "string"}` (what z.record sends) holds
 * already; an `enum` or `const` of names becomes those properties. Anything else on key names (a
 * length, a format) is refused; `pattern` is ignored as everywhere.
 */
function propertyNamesOf(node: unknown, path: string): string[] | undefined {
  if (node === true || (isObject(node) && Object.keys(node).length === 0)) return undefined;
  if (node === false) return [];
  if (!isObject(node)) refuse(path, 'must be a JSON Schema object');
  let names: string[] | undefined;
  for (const [key, value] of Object.entries(node)) {
    const at = `${path}.${key}`;
    if (key === 'type') {
      if (value !== 'string' && !(Array.isArray(value) && value.includes('string'))) refuse(at, 'must allow strings (JSON keys are strings)');
    } else if (key === 'enum' || key === 'const') {
      const list = key === 'enum' ? value : [value];
      if (!Array.isArray(list) || !list.every((name) => typeof name === 'string')) refuse(at, 'must list strings');
      list.forEach((name: string, index) => checkedText(name, key === 'enum' ? `${at}[${index}]` : at));
      names = names ? names.filter((name) => list.includes(name)) : [...list];
    } else if (!ANNOTATIONS.has(key)) refuse(at, `uses "${key}", which Hearth cannot enforce on property names with a grammar`);
  }
  return names;
}

/** Only these keys: each takes its declared schema, else the additionalProperties schema. */
function limitKeys(out: Record<string, unknown>, names: string[] | undefined): void {
  if (names === undefined) return;
  const declared = isObject(out.properties) ? out.properties : {};
  const rest = isObject(out.additionalProperties) ? out.additionalProperties : ANY_JSON;
  out.properties = Object.fromEntries(names.map((name) => [name, declared[name] ?? rest]));
  out.additionalProperties = false;
  if (out.type === undefined) out.type = 'object';
}

/** Any JSON value, for `{}` and `true` schemas. */
const ANY_JSON: Record<string, unknown> = { type: ['string', 'number', 'boolean', 'null'] };

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuse(path: string, problem: string): never {
  throw new HearthError('invalid_request_error', `${path} ${problem}.`, { param: path });
}
