import type { FastifyInstance } from 'fastify';
import type { ImageGenerationRequest } from '#shared/api/images.js';
import { HearthError } from '../../errors.js';
import type { RouteOptions } from '../plugin.js';
import { booleanField, enumField, numberField, readForm, textField, type Form } from './multipart.js';
import { respondWithJob } from './respond.js';

const FORMATS = ['b64_json', 'url'] as const;

const generationBody = {
  type: 'object',
  required: ['model', 'prompt'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1 },
    prompt: { type: 'string', minLength: 1, maxLength: 32000 },
    negative_prompt: { type: 'string', maxLength: 32000 },
    n: { type: 'integer', minimum: 1, maximum: 4 },
    size: { type: 'string' },
    steps: { type: 'integer', minimum: 1, maximum: 1000 },
    guidance: { type: 'number', minimum: 0, maximum: 50 },
    seed: { type: 'integer', minimum: 0, maximum: 4294967295 },
    response_format: { enum: FORMATS },
    stream: { type: 'boolean' },
    // OpenAI's end-user tag: accepted, not used.
    user: { type: 'string' },
  },
} as const;

function required(form: Form, name: string): string {
  const value = textField(form, name);
  if (value === undefined || value === '') throw new HearthError('invalid_request_error', `${name} is required.`, { param: name });
  return value;
}

/** POST /v1/images/generations (JSON), /v1/images/edits and /v1/images/upscale (multipart). */
export async function imageOperationRoutes(app: FastifyInstance, { services }: RouteOptions): Promise<void> {
  const uploadLimit = () => services.config.server.limits.images_body_mb * 1024 * 1024;

  app.post<{ Body: ImageGenerationRequest }>('/v1/images/generations', { schema: { body: generationBody } }, async (request, reply) => {
    const body = request.body;
    return respondWithJob(request, reply, services, { stream: body.stream === true, responseFormat: body.response_format }, (options) =>
      services.images.generate(body, options),
    );
  });

  app.post('/v1/images/edits', { bodyLimit: uploadLimit() }, async (request, reply) => {
    const form = await readForm(
      request,
      {
        files: ['image', 'image[]', 'mask'],
        fields: ['model', 'prompt', 'negative_prompt', 'n', 'size', 'steps', 'guidance', 'seed', 'strength', 'response_format', 'stream', 'user'],
      },
      uploadLimit(),
    );
    const stream = booleanField(form, 'stream') ?? false;
    const masks = form.files.get('mask') ?? [];
    if (masks.length > 1) throw new HearthError('invalid_request_error', 'Send at most one mask.', { param: 'mask' });
    const input = {
      model: required(form, 'model'),
      prompt: required(form, 'prompt'),
      negative_prompt: textField(form, 'negative_prompt'),
      n: numberField(form, 'n', { integer: true, min: 1, max: 4 }),
      size: textField(form, 'size') || undefined,
      steps: numberField(form, 'steps', { integer: true, min: 1, max: 1000 }),
      guidance: numberField(form, 'guidance', { min: 0, max: 50 }),
      seed: numberField(form, 'seed', { integer: true, min: 0, max: 4294967295 }),
      strength: numberField(form, 'strength', { min: 0, max: 1 }),
      images: [...(form.files.get('image') ?? []), ...(form.files.get('image[]') ?? [])],
      mask: masks[0],
    };
    return respondWithJob(request, reply, services, { stream, responseFormat: enumField(form, 'response_format', FORMATS) }, (options) =>
      services.images.edit(input, options),
    );
  });

  app.post('/v1/images/upscale', { bodyLimit: uploadLimit() }, async (request, reply) => {
    const form = await readForm(request, { files: ['image'], fields: ['model', 'scale', 'response_format', 'stream'] }, uploadLimit());
    const images = form.files.get('image') ?? [];
    if (images.length !== 1) throw new HearthError('invalid_request_error', 'Send exactly one image, in the multipart field "image".', { param: 'image' });
    const input = { model: required(form, 'model'), scale: numberField(form, 'scale', { integer: true, min: 1, max: 16 }) ?? 2, image: images[0]! };
    return respondWithJob(
      request,
      reply,
      services,
      { stream: booleanField(form, 'stream') ?? false, responseFormat: enumField(form, 'response_format', FORMATS) },
      (options) => services.images.upscale(input, options),
    );
  });
}
