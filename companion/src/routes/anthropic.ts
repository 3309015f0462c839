import { installErrorHandling } from '../http/error-handler.js';
import { countTokensRoutes } from './anthropic/count-tokens.js';
import { anthropicError } from './anthropic/errors.js';
import { messageRoutes } from './anthropic/messages.js';
import type { AnthropicContext } from './contexts.js';
import { registerParts, type RoutePlugin } from './plugin.js';

/**
 * Anthropic's Messages API: POST /v1/messages and /v1/messages/count_tokens, on the one
 * generation path. Every error of these routes, a refused key or a bad body included, is in
 * Anthropic's shape: the family installs it for its own scope.
 */
export const anthropicRoutes: RoutePlugin<AnthropicContext> = async (app, context) => {
  installErrorHandling(app, anthropicError);
  await registerParts(app, context, [messageRoutes, countTokensRoutes]);
};
