import type { FastifyRequest } from 'fastify';
import { HearthError } from '../../errors.js';

export interface Form {
  files: Map<string, Buffer[]>;
  fields: Map<string, string>;
}

/**
 * Reads a multipart/form-data body whole, accepting only the named file and text fields (a
 * stray or misplaced field is a 400 naming it, not something silently dropped).
 */
export async function readForm(request: FastifyRequest, accepted: { files: string[]; fields: string[] }, maxBytes: number): Promise<Form> {
  if (!request.isMultipart()) {
    throw new HearthError(
      'unsupported_media_type',
      'Send this request as multipart/form-data, with the image in the "image" field (as OpenAI\'s image edits).',
    );
  }
  const form: Form = { files: new Map(), fields: new Map() };
  try {
    for await (const part of request.parts({ limits: { fileSize: maxBytes, files: 16, fields: 32, fieldSize: 64 * 1024 } })) {
      if (part.type === 'file') {
        if (!accepted.files.includes(part.fieldname)) {
          part.file.resume();
          throw new HearthError('invalid_request_error', `"${part.fieldname}" is not a file field of this route (expected ${accepted.files.join(', ')}).`, {
            param: part.fieldname,
          });
        }
        const list = form.files.get(part.fieldname) ?? [];
        list.push(await part.toBuffer());
        form.files.set(part.fieldname, list);
      } else {
        if (!accepted.fields.includes(part.fieldname)) {
          const hint = accepted.files.includes(part.fieldname) ? ' It must be sent as a file.' : '';
          throw new HearthError('invalid_request_error', `"${part.fieldname}" is not a field of this route.${hint}`, { param: part.fieldname });
        }
        form.fields.set(part.fieldname, String(part.value));
      }
    }
  } catch (error) {
    if (error instanceof HearthError) throw error;
    const code = (error as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE')
      throw new HearthError('request_too_large', `An uploaded file is larger than ${Math.round(maxBytes / 1048576)} MB (server.limits.images_body_mb).`);
    if (code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT')
      throw new HearthError('invalid_request_error', 'The form has too many parts.');
    throw new HearthError('invalid_request_error', `The multipart body could not be read: ${(error as Error).message}`);
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
