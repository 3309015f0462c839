/**
 * JSON Schema problems in words a person reads: "must be an integer or null", not "must be
 * integer,null". The one place that words types, bounds, lengths, allowed values, forms and
 * paths, for whoever is told: a client (request bodies, paths, queries and multipart fields; tool
 * arguments) or the owner editing config.yaml, whose fuller sentences (config/problems.ts) are
 * built from these same words.
 */
import { AGENT_ID_PATTERN, AGENT_ID_RULE } from '#shared/api/agents.js';

/** The part of an ajv error these messages use. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** JSON's types, named in JSON's terms for clients, and in YAML's for config.yaml, which is text a person writes. */
const TYPE_WORDS = {
  json: { string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean', object: 'an object', array: 'an array', null: 'null' },
  yaml: {
    string: 'text',
    number: 'a number',
    integer: 'a whole number',
    boolean: 'true or false',
    object: 'a mapping (key: value lines)',
    array: 'a list',
    null: 'null',
  },
} as const;

export type Vocabulary = keyof typeof TYPE_WORDS;

/** Patterns, in words. */
const PATTERN_WORDS: Record<string, string> = {
  '^[a-z0-9][a-z0-9._-]*$': 'lowercase letters, digits, ".", "_" and "-", starting with a letter or digit',
  '^[a-z0-9][a-z0-9_-]*$': 'lowercase letters, digits, "_" and "-", starting with a letter or digit',
  '^(\\*|https?://[^/\\s]+)$': '"*" or an origin such as http://localhost:5173 (no path)',
  '^/': 'an absolute path (starting with /)',
  '^\\S+$': 'one word, without spaces',
  '^[A-Za-z_][A-Za-z0-9_]*$': 'letters, digits and "_", not starting with a digit',
  [AGENT_ID_PATTERN]: AGENT_ID_RULE,
};

/** "a", "a or b", "a, b or c". */
export function inWords(items: string[]): string {
  const unique = [...new Set(items)];
  if (unique.length <= 1) return unique[0] ?? '';
  return `${unique.slice(0, -1).join(', ')} or ${unique.at(-1)!}`;
}

/** JSON types as words: ["integer", "null"] -> "an integer or null"; ["string", "array", "null"] -> "a string, an array or null". */
export function typesInWords(types: unknown, vocabulary: Vocabulary = 'json'): string {
  const words: Record<string, string> = TYPE_WORDS[vocabulary];
  const list = (Array.isArray(types) ? types : String(types).split(',')).map(String);
  // An integer is a number: "a number or an integer" says nothing more than "a number".
  const named = [...new Set(list)].filter((type, _index, all) => !(type === 'integer' && all.includes('number')));
  // null reads best last: "an integer or null".
  const ordered = [...named.filter((type) => type !== 'null'), ...named.filter((type) => type === 'null')];
  return inWords(ordered.map((type) => words[type] ?? type));
}

const LIMIT_WORDS: Record<string, string> = { minimum: 'at least', exclusiveMinimum: 'more than', maximum: 'at most', exclusiveMaximum: 'less than' };

/** One bound of a number: "at least 1", "more than 0", "at most 2", "less than 5". */
export function limitInWords(keyword: string, limit: unknown): string {
  return `${LIMIT_WORDS[keyword] ?? keyword} ${String(limit)}`;
}

/** Every bound a schema sets: "from 0 to 65535" when both ends are inclusive, else each of them ("more than 0, at most 1024"); "" when none. */
export function rangeInWords(schema: Readonly<Record<string, unknown>>): string {
  if (schema.minimum !== undefined && schema.maximum !== undefined) return `from ${String(schema.minimum)} to ${String(schema.maximum)}`;
  const low = schema.minimum !== undefined ? 'minimum' : schema.exclusiveMinimum !== undefined ? 'exclusiveMinimum' : undefined;
  const high = schema.maximum !== undefined ? 'maximum' : schema.exclusiveMaximum !== undefined ? 'exclusiveMaximum' : undefined;
  return [low, high]
    .filter((keyword) => keyword !== undefined)
    .map((keyword) => limitInWords(keyword, schema[keyword]))
    .join(', ');
}

/** The values allowed: `one of: "a", "b"`. */
export function valuesInWords(values: readonly unknown[]): string {
  return `one of: ${values.map((value) => JSON.stringify(value)).join(', ')}`;
}

/** What a string pattern asks for, where it has words: a known pattern, the schema's own description, a web address. */
export function formInWords(pattern: string, description?: unknown): string | undefined {
  const words = PATTERN_WORDS[pattern] ?? (typeof description === 'string' ? description : undefined);
  if (words) return words;
  if (pattern.startsWith('^https://')) return 'an https:// address';
  if (pattern.startsWith('^https?://')) return 'an http:// or https:// address';
  return undefined;
}

/** A JSON pointer as a path people write: `/messages/0/role` -> `messages[0].role`. */
export function pointerToPath(pointer: string): string {
  return pointer
    .replace(/^\//, '')
    .replace(/\/(\d+)(?=\/|$)/g, '[$1]')
    .replace(/\//g, '.')
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
}

const plural = (count: unknown, one: string, many: string) => `${String(count)} ${Number(count) === 1 ? one : many}`;

/** The message of one error, without the field's name ("must be an integer or null"). */
export function schemaMessage(error: SchemaError): string {
  const { params } = error;
  switch (error.keyword) {
    case 'type':
      return `must be ${typesInWords(params.type)}`;
    case 'required':
      return `must have the field ${JSON.stringify(params.missingProperty)}`;
    case 'additionalProperties':
      return `has an unknown field ${JSON.stringify(params.additionalProperty)}`;
    case 'enum':
      return `must be ${valuesInWords(params.allowedValues as unknown[])}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return `must be ${limitInWords(error.keyword, params.limit)}`;
    case 'multipleOf':
      return `must be a multiple of ${String(params.multipleOf)}`;
    case 'minLength':
      return Number(params.limit) === 1 ? 'must not be empty' : `must be at least ${plural(params.limit, 'character', 'characters')} long`;
    case 'maxLength':
      return `must be at most ${plural(params.limit, 'character', 'characters')} long`;
    case 'minItems':
      return Number(params.limit) === 1 ? 'must not be empty' : `must have at least ${plural(params.limit, 'item', 'items')}`;
    case 'maxItems':
      return `must have at most ${plural(params.limit, 'item', 'items')}`;
    case 'minProperties':
      return Number(params.limit) === 1 ? 'must not be empty' : `must have at least ${plural(params.limit, 'field', 'fields')}`;
    case 'maxProperties':
      return `must have at most ${plural(params.limit, 'field', 'fields')}`;
    case 'uniqueItems':
      return `must not repeat an item (items ${String(params.j)} and ${String(params.i)} are the same)`;
    case 'pattern': {
      const form = formInWords(String(params.pattern));
      return form ? `must be ${form}` : `must match the pattern ${String(params.pattern)}`;
    }
    case 'format':
      return `must be a valid ${String(params.format)}`;
    case 'anyOf':
    case 'oneOf':
      return Array.isArray(params.passingSchemas)
        ? 'matches more than one of the allowed forms (it must match exactly one)'
        : 'must match one of the allowed forms';
    case 'not':
      return 'is not allowed here';
    case 'dependentRequired':
    case 'dependencies':
      return `requires ${String(params.missingProperty)} when ${String(params.property)} is given`;
    case 'propertyNames':
      return `has a field whose name is not allowed (${String(params.propertyName)})`;
    default:
      return error.message ?? 'is not valid';
  }
}

/**
 * An error said of the field it concerns: a missing field is named and "is required", an
 * unknown one "is not a known field" (or argument); any other problem is `message`, said of the
 * value at the error's path.
 */
export function problemAt(error: SchemaError, message = schemaMessage(error), noun = 'field'): { path: string; message: string } {
  const { params } = error;
  const field = typeof params.missingProperty === 'string' ? params.missingProperty : params.additionalProperty;
  const path = pointerToPath(error.instancePath);
  const at = typeof field === 'string' ? (path ? `${path}.${field}` : field) : path;
  if (error.keyword === 'required') return { path: at, message: 'is required' };
  if (error.keyword === 'additionalProperties') return { path: at, message: `is not a known ${noun}` };
  return { path: at, message };
}

/**
 * The error to report out of one failed validation, with its message. When a value matched none
 * of the forms an `anyOf`/`oneOf` allows, ajv lists every form's error before its own: the error
 * of the form that came closest (one that got inside the value) is the one to tell; if none did,
 * the forms' types are named together ("must be a string, an array or null").
 */
export function explainSchemaErrors(errors: SchemaError[]): { error: SchemaError; message: string } {
  const first = errors[0]!;
  const choice = errors.find((error) => (error.keyword === 'anyOf' || error.keyword === 'oneOf') && within(first.instancePath, error.instancePath));
  if (!choice) return { error: first, message: schemaMessage(first) };
  const branches = errors.filter((error) => error !== choice && within(error.instancePath, choice.instancePath));
  const deeper = branches.filter((error) => error.instancePath !== choice.instancePath);
  if (deeper.length > 0) {
    const deepest = deeper.reduce((best, error) => (error.instancePath.length > best.instancePath.length ? error : best));
    return { error: deepest, message: schemaMessage(deepest) };
  }
  if (branches.length > 0 && branches.every((error) => error.keyword === 'type'))
    return {
      error: choice,
      message: `must be ${typesInWords(branches.flatMap((error) => (Array.isArray(error.params.type) ? error.params.type : String(error.params.type).split(','))))}`,
    };
  const plain = branches.find((error) => error.keyword !== 'type');
  return plain ? { error: plain, message: schemaMessage(plain) } : { error: choice, message: schemaMessage(choice) };
}

/** Whether `path` is `parent` or inside it (JSON pointers). */
function within(path: string, parent: string): boolean {
  return path === parent || path.startsWith(`${parent}/`);
}
