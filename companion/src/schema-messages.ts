/**
 * JSON Schema validation errors (ajv's) in words a person reads: "must be an integer or null",
 * not "must be integer,null". One wording for request bodies, configuration documents and tool
 * arguments alike.
 */

/** The part of an ajv error these messages use. */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

/** "a", "a or b", "a, b or c". */
export function inWords(items: string[]): string {
  const unique = [...new Set(items)];
  if (unique.length <= 1) return unique[0] ?? '';
  return `${unique.slice(0, -1).join(', ')} or ${unique.at(-1)!}`;
}

/** JSON types as words: ["integer", "null"] -> "an integer or null"; ["string", "array", "null"] -> "a string, an array or null". */
export function typesInWords(types: unknown): string {
  const list = (Array.isArray(types) ? types : String(types).split(',')).map(String);
  // An integer is a number: "a number or an integer" says nothing more than "a number".
  const named = [...new Set(list)].filter((type, _index, all) => !(type === 'integer' && all.includes('number')));
  // null reads best last: "an integer or null".
  const ordered = [...named.filter((type) => type !== 'null'), ...named.filter((type) => type === 'null')];
  return inWords(ordered.map((type) => TYPE_WORDS[type] ?? type));
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
      return `must be one of: ${(params.allowedValues as unknown[]).map((value) => JSON.stringify(value)).join(', ')}`;
    case 'const':
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case 'minimum':
      return `must be at least ${String(params.limit)}`;
    case 'maximum':
      return `must be at most ${String(params.limit)}`;
    case 'exclusiveMinimum':
      return `must be greater than ${String(params.limit)}`;
    case 'exclusiveMaximum':
      return `must be less than ${String(params.limit)}`;
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
    case 'pattern':
      return `must match the pattern ${String(params.pattern)}`;
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
