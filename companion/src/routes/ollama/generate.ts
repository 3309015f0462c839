import type { OllamaGenerateChunk, OllamaGenerateRequest } from '#shared/api/ollama.js';
import { resolveGenerator } from '../../generation/generate.js';
import type { HistoryItem } from '../../inference/types.js';
import type { OllamaContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { answer, doneReasonOf } from './answer.js';
import { maxTokensOf, thinkingOf, OLLAMA_FIELDS, outputOf, imagesOf, refuseImages, samplingOf } from './convert.js';
import { keepAliveOf } from './keep-alive.js';
import { loadOnly } from './load.js';
import { resolveName, targetId } from './names.js';
import { formatSchema, keepAliveSchema, optionsSchema, thinkSchema } from './schemas.js';

/** POST /api/generate */
export const ollamaGenerateBody = {
  type: 'object',
  required: ['model'],
  properties: {
    model: nonEmptyString(),
    prompt: { type: 'string' },
    suffix: { type: 'string' },
    system: { type: 'string' },
    raw: { type: 'boolean' },
    images: { type: 'array', items: { type: 'string' } },
    format: formatSchema,
    options: optionsSchema,
    stream: { type: 'boolean' },
    keep_alive: keepAliveSchema,
    think: thinkSchema,
    context: { type: 'array', items: { type: 'integer' } },
  },
} as const satisfies BodySchema<OllamaGenerateRequest>;

type Used = 'catalog' | 'downloads' | 'generation' | 'engine' | 'shutdown';

/**
 * POST /api/generate: a prompt with a suffix is fill-in-the-middle (the model's FIM tokens); with
 * `raw` it is the whole prompt as it is; else it is one user turn (after `system`) through the
 * model's chat template, as Ollama renders it.
 */
export const generateRoutes: RoutePlugin<OllamaContext, Used> = async (app, context) => {
  app.post<{ Body: OllamaGenerateRequest }>('/api/generate', { schema: { body: ollamaGenerateBody } }, async (request, reply) => {
    const body = request.body;
    const unloadAfter = keepAliveOf(body.keep_alive) === 'unload';
    // Images go with the templated user turn; a raw or fill-in-the-middle prompt has no place for them.
    if (body.raw || body.suffix) refuseImages(body.images, 'images', body.suffix ? 'with a suffix (fill-in-the-middle)' : 'with raw: true');
    const media = imagesOf(body.images, 'images');
    const target = await resolveName(context, body.model);
    const prompt = body.prompt ?? '';
    const created = () => new Date().toISOString();
    // No prompt: Ollama loads the model (or unloads it, with keep_alive 0) and says so.
    if (prompt === '' && !body.suffix && !media) {
      const reason = await loadOnly(context, target, unloadAfter);
      return { model: body.model, created_at: created(), response: '', done: true, done_reason: reason };
    }
    const generator = await resolveGenerator(context.generation, targetId(target));
    const raw = body.suffix ? { prompt, suffix: body.suffix } : body.raw ? { prompt } : undefined;
    const history: HistoryItem[] = raw
      ? []
      : [...(body.system ? [{ role: 'system' as const, text: body.system }] : []), { role: 'user', text: prompt, ...(media ? { media } : {}) }];
    return answer<OllamaGenerateChunk>(context, request, reply, {
      generator,
      stream: body.stream !== false,
      unloadAfter,
      generation: {
        model: generator.id,
        history,
        ...(raw ? { raw } : {}),
        maxTokens: maxTokensOf(body.options),
        sampling: samplingOf(body.options),
        stop: body.options?.stop ?? [],
        tools: [],
        toolMode: { type: 'none' },
        output: outputOf(body.format),
        reasoning: thinkingOf(body.think, maxTokensOf(body.options)),
        fields: { ...OLLAMA_FIELDS, history: 'prompt' },
      },
      shape: {
        piece: (text, thinking) => ({ model: body.model, created_at: created(), response: text, ...(thinking ? { thinking } : {}), done: false }),
        calls: () => [],
        done: (result, metrics, whole) => ({
          model: body.model,
          created_at: created(),
          response: whole ? result.text : '',
          ...(whole && result.reasoning ? { thinking: result.reasoning } : {}),
          done: true,
          done_reason: doneReasonOf(result),
          context: [],
          ...metrics,
        }),
      },
    });
  });
};
