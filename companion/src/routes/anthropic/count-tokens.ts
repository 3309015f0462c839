import { HearthError } from '../../errors.js';
import type { AnthropicContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { CountTokensRequest, CountTokensResponse } from '#shared/api/anthropic.js';
import { withModelAdvice } from './claude-code.js';
import { conversationOf } from './convert.js';
import { countTokensBody } from './schema.js';

/**
 * POST /v1/messages/count_tokens (also with ?beta=true): the prompt's tokens as /v1/messages
 * would run it, with the model's own chat template and tokenizer (tools and system included).
 * A provider's model cannot be counted: OpenAI-compatible providers have no counting route,
 * and an estimate would be a number that is not the model's.
 */
export const countTokensRoutes: RoutePlugin<AnthropicContext, 'generation' | 'shutdown'> = async (app, context) => {
  app.post<{ Body: CountTokensRequest }>('/v1/messages/count_tokens', { schema: { body: countTokensBody } }, async (request): Promise<CountTokensResponse> => {
    const body = request.body;
    const target = await context.generation.catalog.resolve(body.model).catch((error: unknown) => {
      throw withModelAdvice(error);
    });
    if (target.kind === 'provider')
      throw new HearthError(
        'invalid_request_error',
        `${target.id} is a provider's model, and its provider has no way to count tokens: counting needs a local model.`,
        { param: 'model' },
      );
    const input = await context.generation.engine.countTokens(target.info, { ...conversationOf(body), signal: context.shutdown });
    return { input_tokens: input };
  });
};
