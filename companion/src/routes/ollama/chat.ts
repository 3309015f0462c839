import type { OllamaChatChunk, OllamaChatRequest } from '#shared/api/ollama.js';
import { resolveGenerator } from '../../generation/generate.js';
import type { OllamaContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { nonEmptyString, type BodySchema } from '../schema.js';
import { functionTools } from '../schema-fragments.js';
import { answer, doneReasonOf } from './answer.js';
import { argumentsOf, thinkingOf, historyOf, maxTokensOf, OLLAMA_FIELDS, outputOf, samplingOf, toolsOf } from './convert.js';
import { keepAliveOf } from './keep-alive.js';
import { loadOnly } from './load.js';
import { resolveName, targetId } from './names.js';
import { formatSchema, keepAliveSchema, optionsSchema, thinkSchema } from './schemas.js';

/** POST /api/chat: types are checked here, meaning in convert.ts. */
export const ollamaChatBody = {
  type: 'object',
  required: ['model'],
  properties: {
    model: nonEmptyString(),
    messages: {
      type: 'array',
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { enum: ['system', 'user', 'assistant', 'tool'] },
          content: { type: 'string' },
          thinking: { type: 'string' },
          images: { type: 'array', items: { type: 'string' } },
          tool_calls: {
            type: 'array',
            items: {
              type: 'object',
              required: ['function'],
              properties: {
                function: {
                  type: 'object',
                  required: ['name'],
                  properties: { name: { type: 'string' }, arguments: { type: 'object' }, index: { type: 'integer' } },
                },
                id: { type: 'string' },
              },
            },
          },
          tool_name: { type: 'string' },
          tool_call_id: { type: 'string' },
        },
      },
    },
    tools: functionTools({}),
    format: formatSchema,
    options: optionsSchema,
    stream: { type: 'boolean' },
    keep_alive: keepAliveSchema,
    think: thinkSchema,
  },
} as const satisfies BodySchema<OllamaChatRequest>;

type Used = 'catalog' | 'downloads' | 'generation' | 'engine' | 'shutdown';

export const chatRoutes: RoutePlugin<OllamaContext, Used> = async (app, context) => {
  app.post<{ Body: OllamaChatRequest }>('/api/chat', { schema: { body: ollamaChatBody } }, async (request, reply) => {
    const body = request.body;
    const unloadAfter = keepAliveOf(body.keep_alive) === 'unload';
    const target = await resolveName(context, body.model);
    const messages = (body.messages ?? []).map((message) => ({ ...message, content: message.content ?? '' }));
    // No messages: Ollama loads the model (or unloads it, with keep_alive 0) and says so.
    if (messages.length === 0) {
      const reason = await loadOnly(context, target, unloadAfter);
      return { model: body.model, created_at: new Date().toISOString(), message: { role: 'assistant', content: '' }, done: true, done_reason: reason };
    }
    const generator = await resolveGenerator(context.generation, targetId(target));
    const tools = toolsOf(body.tools);
    const base = () => ({ model: body.model, created_at: new Date().toISOString() });
    return answer<OllamaChatChunk>(context, request, reply, {
      generator,
      stream: body.stream !== false,
      unloadAfter,
      generation: {
        model: generator.id,
        history: historyOf(messages),
        maxTokens: maxTokensOf(body.options),
        sampling: samplingOf(body.options),
        stop: body.options?.stop ?? [],
        tools,
        toolMode: { type: tools.length > 0 ? 'auto' : 'none' },
        output: outputOf(body.format),
        reasoning: thinkingOf(body.think, maxTokensOf(body.options)),
        fields: OLLAMA_FIELDS,
      },
      shape: {
        piece: (text, thinking) => ({ ...base(), message: { role: 'assistant', content: text, ...(thinking ? { thinking } : {}) }, done: false }),
        calls: (result) =>
          result.toolCalls.length > 0 ? [{ ...base(), message: { role: 'assistant', content: '', tool_calls: callsOf(result.toolCalls) }, done: false }] : [],
        done: (result, metrics, whole) => ({
          ...base(),
          message: whole
            ? {
                role: 'assistant',
                content: result.text,
                ...(result.reasoning ? { thinking: result.reasoning } : {}),
                ...(result.toolCalls.length > 0 ? { tool_calls: callsOf(result.toolCalls) } : {}),
              }
            : { role: 'assistant', content: '' },
          done: true,
          done_reason: doneReasonOf(result),
          ...metrics,
        }),
      },
    });
  });
};

function callsOf(calls: { id: string; name: string; arguments: string }[]) {
  return calls.map((call, index) => ({ id: call.id, function: { index, name: call.name, arguments: argumentsOf(call.arguments) } }));
}
