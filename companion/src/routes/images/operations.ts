import type { FastifyInstance } from 'fastify';
import type { ImageGenerationRequest } from '#shared/api/images.js';
import { HearthError } from '../../errors.js';
import type { RouteOptions } from '../plugin.js';
import { atMost, booleanField, enumField, MAX_FILE_PARTS, numberField, readForm, textField, type FileRule, type Form } from './multipart.js';
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
  /**
   * Reference images for an edit: one, or (for a model that takes several) up to the most file
   * parts a form may have. When the model is named before the images, a second image for a
   * model that takes one is refused before it is read.
   */
  const references: FileRule = (count, fields, name) => {
    const model = fields.get('model');
    if (count > 1 && model) {
      const { record } = services.images.find(model);
      if (!record.capabilities.multiple_references) {
        throw new HearthError('model_capability_missing', `${record.id} takes one reference image; this request sends more.`, { param: 'image' });
      }
    }
    atMost(MAX_FILE_PARTS)(count, fields, name);
  };

  app.post<{ Body: ImageGenerationRequest }>('/v1/images/generations', { schema: { body: generationBody } }, async (request, reply) => {
    const body = request.body;
    return respondWithJob(request, reply, services, { stream: body.stream === true, responseFormat: body.response_format }, (options) =>
      services.images.generate(body, options),
    );
  });

  app.post('/v1/images/edits', async (request, reply) => {
    const form = await readForm(request, {
      files: { image: references, 'image[]': references, mask: atMost(1) },
      fields: ['model', 'prompt', 'negative_prompt', 'n', 'size', 'steps', 'guidance', 'seed', 'strength', 'response_format', 'stream', 'user'],
      maxBytes: uploadLimit(),
    });
    const stream = booleanField(form, 'stream') ?? false;
    const masks = form.files.get('mask') ?? [];
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

  app.post('/v1/images/upscale', async (request, reply) => {
    const form = await readForm(request, { files: { image: atMost(1) }, fields: ['model', 'scale', 'response_format', 'stream'], maxBytes: uploadLimit() });
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
