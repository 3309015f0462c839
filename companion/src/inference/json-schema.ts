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
        out.items = convert(value, at);
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
  // Only declared properties are generated: an object schema without additionalProperties would
  // otherwise let a weak model wander into keys nobody asked for.
  if (out.type === 'object' && out.additionalProperties === undefined) out.additionalProperties = out.properties === undefined;
  if (out.type === undefined && out.properties !== undefined) out.type = 'object';
  return out;
}

/** Any JSON value, for `{}` and `true` schemas. */
const ANY_JSON: Record<string, unknown> = { type: ['string', 'number', 'boolean', 'null'] };

function isObject(value: unknown): value is JsonSchema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refuse(path: string, problem: string): never {
  throw new HearthError('invalid_request_error', `${path} ${problem}.`, { param: path });
}
