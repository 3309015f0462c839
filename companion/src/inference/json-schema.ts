import type { GbnfJsonSchema } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import type { JsonSchema } from '#shared/api/openai.js';

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
  return convert(schema, param) as GbnfJsonSchema;
}

function convert(node: unknown, path: string): Record<string, unknown> {
  if (node === true || (isObject(node) && Object.keys(node).length === 0)) return ANY_JSON;
  if (!isObject(node)) refuse(path, 'must be a JSON Schema object');
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
        out.properties = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, convert(child, `${at}.${name}`)]));
        break;
      }
      case 'items':
        // Draft-07 tuples list their items; 2020-12 closes a tuple with `items: false`.
        if (Array.isArray(value)) {
          out.prefixItems = value.map((child, index) => convert(child, `${at}[${index}]`));
          later.tuple = true;
        } else if (value === false) later.closed = true;
        else if (value !== true) out.items = convert(value, at);
        break;
      case 'additionalItems':
        later.additionalItems = value;
        break;
      case 'propertyNames':
        later.propertyNames = value;
        break;
      case 'prefixItems':
        if (!Array.isArray(value)) refuse(at, 'must be an array');
        out.prefixItems = value.map((child, index) => convert(child, `${at}[${index}]`));
        break;
      case 'additionalProperties':
        out.additionalProperties = typeof value === 'boolean' ? value : convert(value, at);
        break;
      case 'anyOf':
      case 'oneOf':
        if (!Array.isArray(value) || value.length === 0) refuse(at, 'must be a non-empty array');
        out.oneOf = value.map((child, index) => convert(child, `${at}[${index}]`));
        break;
      case '$defs':
      case 'definitions': {
        if (!isObject(value)) refuse(at, 'must be an object');
        out.$defs = Object.fromEntries(Object.entries(value).map(([name, child]) => [name, convert(child, `${at}.${name}`)]));
        break;
      }
      case '$ref':
        if (typeof value !== 'string' || !/^#\/(\$defs|definitions)\/[^/]+$/.test(value)) refuse(at, 'must point into #/$defs');
        out.$ref = value.replace('#/definitions/', '#/$defs/');
        break;
      case 'format':
        // Formats the grammar knows are enforced; others (email, uri, ...) stay plain strings.
        if (typeof value === 'string' && FORMATS.has(value)) out.format = value;
        break;
      case 'required':
      case 'enum':
      case 'const':
      case 'minLength':
      case 'maxLength':
      case 'minItems':
      case 'maxItems':
      case 'minProperties':
      case 'maxProperties':
        out[key] = value;
        break;
      default:
        if (!ANNOTATIONS.has(key)) refuse(at, `uses "${key}", which Hearth cannot enforce with a grammar`);
        if (key === 'description' && typeof value === 'string') out.description = value;
    }
  }
  closeTuple(out, later, path);
  if (later.propertyNames !== undefined) limitKeys(out, propertyNamesOf(later.propertyNames, `${path}.propertyNames`));
  // Only declared properties are generated: an object schema without additionalProperties would
  // otherwise let a weak model wander into keys nobody asked for.
  if (out.type === 'object' && out.additionalProperties === undefined) out.additionalProperties = out.properties === undefined;
  if (out.type === undefined && out.properties !== undefined) out.type = 'object';
  return out;
}

/**
 * Tuples: draft-07 `items: [...]` with `additionalItems` (false: closed; a schema: the rest), and
 * 2020-12 `prefixItems` with `items: false` (closed). A closed tuple gets maxItems = its length.
 */
function closeTuple(out: Record<string, unknown>, later: { tuple?: boolean; closed?: boolean; additionalItems?: unknown }, path: string): void {
  const length = Array.isArray(out.prefixItems) ? out.prefixItems.length : 0;
  const close = () => {
    out.maxItems = typeof out.maxItems === 'number' ? Math.min(out.maxItems, length) : length;
    delete out.items;
  };
  if (later.closed) close();
  // additionalItems only means something beside the array form of items.
  if (!later.tuple || later.additionalItems === undefined || later.additionalItems === true) return;
  if (later.additionalItems === false) close();
  else out.items = convert(later.additionalItems, `${path}.additionalItems`);
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
