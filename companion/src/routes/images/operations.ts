import type { ImageEditFields, ImageGenerationRequest, ImageUpscaleFields } from '#shared/api/images.js';
import { HearthError } from '../../errors.js';
import type { ImagesContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { atMost, MAX_FILE_PARTS, readForm, type FileRule } from '../multipart.js';
import { respondWithJob } from './respond.js';
import type { SubmitOptions } from '../../images/jobs/job-manager.js';

const FORMATS = ['b64_json', 'url'] as const;

export const generationBody = {
  type: 'object',
  required: ['model', 'prompt'],
  additionalProperties: false,
  properties: {
    model: nonEmptyString(),
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
} as const satisfies BodySchema<ImageGenerationRequest>;

/** POST /v1/images/edits (multipart): the fields of a generation, and how far to move from the source. */
export const editBody = {
  ...generationBody,
  properties: { ...generationBody.properties, strength: { type: 'number', minimum: 0, maximum: 1 } },
} as const satisfies BodySchema<ImageEditFields>;

/** POST /v1/images/upscale (multipart). */
export const upscaleBody = {
  type: 'object',
  required: ['model'],
  additionalProperties: false,
  properties: {
    model: nonEmptyString(),
    scale: { type: 'integer', minimum: 1, maximum: 16 },
    response_format: { enum: FORMATS },
    stream: { type: 'boolean' },
  },
} as const satisfies BodySchema<ImageUpscaleFields>;

/** POST /v1/images/generations (JSON), /v1/images/edits and /v1/images/upscale (multipart). */
export const imageOperationRoutes: RoutePlugin<ImagesContext, 'config' | 'images' | 'shutdown'> = async (app, context) => {
  const { images } = context;
  /** The limit in force, and what an upload to these routes must be. */
  const upload = () => ({
    maxBytes: context.config().server.limits.images_body_mb * 1024 * 1024,
    limitSetting: 'server.limits.images_body_mb',
    expected: 'the image in the "image" field (as OpenAI\'s image edits)',
  });
  /**
   * Reference images for an edit: one, or (for a model that takes several) up to the most file
   * parts a form may have. When the model is named before the images, a second image for a
   * model that takes one is refused before it is read.
   */
  const references: FileRule = (count, fields, name) => {
    const model = fields.get('model');
    if (count > 1 && model) {
      const { record } = images.find(model);
      if (!record.capabilities.multiple_references) {
        throw new HearthError('model_capability_missing', `${record.id} takes one reference image; this request sends more.`, { param: 'image' });
      }
    }
    atMost(MAX_FILE_PARTS)(count, fields, name);
  };

  app.post<{ Body: ImageGenerationRequest }>('/v1/images/generations', { schema: { body: generationBody } }, async (request, reply) => {
    const body = request.body;
    const start = (options: SubmitOptions) => images.generate(body, options);
    return respondWithJob(context, { stream: body.stream === true, responseFormat: body.response_format, start }, request, reply);
  });

  app.post('/v1/images/edits', async (request, reply) => {
    const form = await readForm<ImageEditFields>(request, {
      files: { image: references, 'image[]': references, mask: atMost(1) },
      body: editBody,
      ...upload(),
    });
    const { fields, files } = form;
    const input = { ...fields, images: [...(files.get('image') ?? []), ...(files.get('image[]') ?? [])], mask: files.get('mask')?.[0] };
    const start = (options: SubmitOptions) => images.edit(input, options);
    return respondWithJob(context, { stream: fields.stream ?? false, responseFormat: fields.response_format, start }, request, reply);
  });

  app.post('/v1/images/upscale', async (request, reply) => {
    const { fields, files } = await readForm<ImageUpscaleFields>(request, { files: { image: atMost(1) }, body: upscaleBody, ...upload() });
    const sent = files.get('image') ?? [];
    if (sent.length !== 1) throw new HearthError('invalid_request_error', 'Send exactly one image, in the multipart field "image".', { param: 'image' });
    const input = { ...fields, scale: fields.scale ?? 2, image: sent[0]! };
    const start = (options: SubmitOptions) => images.upscale(input, options);
    return respondWithJob(context, { stream: fields.stream ?? false, responseFormat: fields.response_format, start }, request, reply);
  });
};
