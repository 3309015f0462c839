import type { FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';

export interface Form {
  files: Map<string, Buffer[]>;
  fields: Map<string, string>;
}

/**
 * Says whether the `count`-th file of field `name` (`image[]` counts as `image`) may be read,
 * given the text fields read so far; it throws the refusal when not.
 */
export type FileRule = (count: number, fields: ReadonlyMap<string, string>, name: string) => void;

export interface FormRules {
  /** The file fields the route takes, each with its rule. */
  files: Record<string, FileRule>;
  fields: string[];
  /** The largest request body, all parts together (server.limits.images_body_mb). */
  maxBytes: number;
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

function tooLarge(maxBytes: number): HearthError {
  const megabytes = Math.round((maxBytes / 1048576) * 100) / 100;
  return new HearthError(
    'request_too_large',
    `The upload is larger than ${megabytes} MB: server.limits.images_body_mb bounds the whole request, every file and field together.`,
  );
}

/**
 * Reads a multipart/form-data body, accepting only the named file and text fields (a stray,
 * misplaced or extra part is a 400 naming it, refused before its bytes are kept). Every byte of
 * the request counts against `maxBytes`: reading stops there with a 413, whatever the parts.
 */
export async function readForm(request: FastifyRequest, rules: FormRules): Promise<Form> {
  if (!request.isMultipart()) {
    throw new HearthError(
      'unsupported_media_type',
      'Send this request as multipart/form-data, with the image in the "image" field (as OpenAI\'s image edits).',
    );
  }
  if (Number(request.headers['content-length']) > rules.maxBytes) throw tooLarge(rules.maxBytes);
  const form: Form = { files: new Map(), fields: new Map() };
  const counts = new Map<string, number>();
  const fileNames = Object.keys(rules.files);
  const parts = request.parts({ limits: { fileSize: rules.maxBytes, files: MAX_FILE_PARTS, fields: 32, fieldSize: 64 * 1024 } })[Symbol.asyncIterator]();
  // Asking for the first part starts the parser (it pipes the request into it at once); the
  // request's bytes are counted from then on as they arrive, multipart framing included.
  const first = parts.next();
  let received = 0;
  const count = (chunk: Buffer) => void (received += chunk.length);
  request.raw.on('data', count);
  const checkSize = () => {
    if (received > rules.maxBytes) throw tooLarge(rules.maxBytes);
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
      } else {
        if (!rules.fields.includes(part.fieldname)) {
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
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge(rules.maxBytes);
    if (code === 'FST_FILES_LIMIT') throw new HearthError('invalid_request_error', `The form has more than ${MAX_FILE_PARTS} files.`);
    if (code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') throw new HearthError('invalid_request_error', 'The form has too many parts.');
    throw new HearthError('invalid_request_error', `The multipart body could not be read: ${(error as Error).message}`);
  } finally {
    request.raw.removeListener('data', count);
  }
  return form;
}

export function textField(form: Form, name: string): string | undefined {
  return form.fields.get(name);
}

/** A numeric text field, refused unless the whole text is a number (integer when asked). */
export function numberField(form: Form, name: string, options: { integer?: boolean; min?: number; max?: number } = {}): number | undefined {
  const text = form.fields.get(name);
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  const valid = /^-?\d+(\.\d+)?$/.test(text.trim()) && Number.isFinite(value) && (!options.integer || Number.isInteger(value));
  if (!valid) throw new HearthError('invalid_request_error', `${name} must be ${options.integer ? 'an integer' : 'a number'}; got "${text}".`, { param: name });
  if ((options.min !== undefined && value < options.min) || (options.max !== undefined && value > options.max)) {
    throw new HearthError('invalid_request_error', `${name} must be between ${options.min} and ${options.max}; got ${value}.`, { param: name });
  }
  return value;
}

export function booleanField(form: Form, name: string): boolean | undefined {
  const text = form.fields.get(name);
  if (text === undefined || text === '') return undefined;
  if (text === 'true' || text === 'false') return text === 'true';
  throw new HearthError('invalid_request_error', `${name} must be true or false; got "${text}".`, { param: name });
}

export function enumField<T extends string>(form: Form, name: string, values: readonly T[]): T | undefined {
  const text = form.fields.get(name);
  if (text === undefined || text === '') return undefined;
  if (!values.includes(text as T)) throw new HearthError('invalid_request_error', `${name} must be one of: ${values.join(', ')}.`, { param: name });
  return text as T;
}
