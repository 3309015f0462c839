/**
 * Multipart/form-data bodies, for the routes that take files as OpenAI's do (image edits and
 * upscales, audio transcriptions): each route registers @fastify/multipart in its own scope and
 * reads its form with `readForm`.
 */
import type { FastifyRequest } from 'fastify';
import { HearthError } from '../errors.js';
import { invalidRequest } from '../http/error-handler.js';
import type { SchemaError } from '../schema-messages.js';
import type { BodySchema } from './schema.js';

/** A form as read: its files by field (and the names the client gave them), and its text fields as the value its schema describes. */
export interface Form<Fields> {
  files: Map<string, Buffer[]>;
  /** Each file's name as sent (`filename=`), by field, in the order of `files`; '' where none was given. */
  names: Map<string, string[]>;
  fields: Fields;
}

/**
 * Says whether the `count`-th file of field `name` (`image[]` counts as `image`) may be read,
 * given the text fields read so far; it throws the refusal when not.
 */
export type FileRule = (count: number, fields: ReadonlyMap<string, string>, name: string) => void;

export interface FormRules<Fields> {
  /** The file fields the route takes, each with its rule. */
  files: Record<string, FileRule>;
  /** The text fields: the schema a JSON body of them would have; they are checked against it once read. */
  body: BodySchema<Fields>;
  /** The largest request body, all parts together. */
  maxBytes: number;
  /** The setting that sets `maxBytes` (server.limits.images_body_mb), named in the 413. */
  limitSetting: string;
  /** What the form should hold, for the 415 of a body that is no form: 'the image in the "image" field (as OpenAI's image edits)'. */
  expected: string;
}

/** The most file parts any route reads (a model's reference images included). */
export const MAX_FILE_PARTS = 16;

/** At most `max` files in this field. */
export const atMost =
  (max: number): FileRule =>
  (count, _fields, name) => {
    if (count > max)
      throw new HearthError('invalid_request_error', `Send at most ${max} "${name}" file${max === 1 ? '' : 's'} in this request.`, { param: name });
  };

function tooLarge(maxBytes: number, setting: string): HearthError {
  const megabytes = Math.round((maxBytes / 1048576) * 100) / 100;
  return new HearthError('request_too_large', `The upload is larger than ${megabytes} MB: ${setting} bounds the whole request, every file and field together.`);
}

/**
 * Reads a multipart/form-data body, accepting only the named file and text fields (a stray,
 * misplaced or extra part is a 400 naming it, refused before its bytes are kept). Every byte of
 * the request counts against `maxBytes`: reading stops there with a 413, whatever the parts.
 */
export async function readForm<Fields>(request: FastifyRequest, rules: FormRules<Fields>): Promise<Form<Fields>> {
  if (!request.isMultipart()) {
    throw new HearthError('unsupported_media_type', `Send this request as multipart/form-data, with ${rules.expected}.`);
  }
  const tooLargeError = () => tooLarge(rules.maxBytes, rules.limitSetting);
  if (Number(request.headers['content-length']) > rules.maxBytes) throw tooLargeError();
  const form = { files: new Map<string, Buffer[]>(), names: new Map<string, string[]>(), fields: new Map<string, string>() };
  const counts = new Map<string, number>();
  const fileNames = Object.keys(rules.files);
  const fieldNames = Object.keys(rules.body.properties);
  const parts = request.parts({ limits: { fileSize: rules.maxBytes, files: MAX_FILE_PARTS, fields: 32, fieldSize: 64 * 1024 } })[Symbol.asyncIterator]();
  // Asking for the first part starts the parser (it pipes the request into it at once); the
  // request's bytes are counted from then on as they arrive, multipart framing included.
  const first = parts.next();
  let received = 0;
  const count = (chunk: Buffer) => void (received += chunk.length);
  request.raw.on('data', count);
  const checkSize = () => {
    if (received > rules.maxBytes) throw tooLargeError();
  };
  try {
    for (let next = await first; !next.done; next = await parts.next()) {
      const part = next.value;
      checkSize();
      if (part.type === 'file') {
        const rule = rules.files[part.fieldname];
        if (!rule) {
          throw new HearthError('invalid_request_error', `"${part.fieldname}" is not a file field of this route (expected ${fileNames.join(', ')}).`, {
            param: part.fieldname,
          });
        }
        const name = part.fieldname.replace(/\[\]$/, '');
        const seen = (counts.get(name) ?? 0) + 1;
        counts.set(name, seen);
        rule(seen, form.fields, name);
        const chunks: Buffer[] = [];
        for await (const chunk of part.file as AsyncIterable<Buffer>) {
          checkSize();
          chunks.push(chunk);
        }
        const list = form.files.get(part.fieldname) ?? [];
        list.push(Buffer.concat(chunks));
        form.files.set(part.fieldname, list);
        form.names.set(part.fieldname, [...(form.names.get(part.fieldname) ?? []), part.filename ?? '']);
      } else {
        if (!fieldNames.includes(part.fieldname)) {
          const hint = fileNames.includes(part.fieldname) ? ' It must be sent as a file.' : '';
          throw new HearthError('invalid_request_error', `"${part.fieldname}" is not a field of this route.${hint}`, { param: part.fieldname });
        }
        form.fields.set(part.fieldname, String(part.value));
      }
    }
    checkSize();
  } catch (error) {
    // Nothing more is parsed or kept: what is still arriving is read and dropped, so the client
    // can read the refusal.
    request.raw.unpipe();
    request.raw.resume();
    if (error instanceof HearthError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLargeError();
    if (code === 'FST_FILES_LIMIT') throw new HearthError('invalid_request_error', `The form has more than ${MAX_FILE_PARTS} files.`);
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') throw new HearthError('invalid_request_error', 'The form has too many parts.');
    throw new HearthError('invalid_request_error', `The multipart body could not be read: ${(error as Error).message}`);
  } finally {
    request.raw.removeListener('data', count);
  }
  return { files: form.files, names: form.names, fields: checkedFields(request, rules.body, form.fields) };
}

/**
 * The text fields as the values their schema describes ("2" for an integer is 2, "true" for a
 * boolean is true; an empty field is one not sent), checked against it as a JSON body is, with
 * the same words for what is wrong.
 */
function checkedFields<Fields>(request: FastifyRequest, schema: BodySchema<Fields>, texts: ReadonlyMap<string, string>): Fields {
  const fields: Record<string, unknown> = {};
  for (const [name, text] of texts) if (text !== '') fields[name] = typedValue(text, schema.properties[name as keyof typeof schema.properties]?.type);
  const validate = request.compileValidationSchema(schema);
  if (!validate(fields)) throw invalidRequest((validate.errors ?? []) as SchemaError[]);
  return fields as Fields;
}

/** A field's text as a number or a boolean where its schema says so and the text is one; else the text, for the schema to refuse. */
function typedValue(text: string, type: unknown): unknown {
  if ((type === 'integer' || type === 'number') && /^-?\d+(\.\d+)?$/.test(text.trim())) return Number(text);
  if (type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}
