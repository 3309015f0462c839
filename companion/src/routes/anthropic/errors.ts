import type { HearthError } from '../../errors.js';
import type { AnthropicErrorBody, ErrorType } from '#shared/api/anthropic.js';

/** Anthropic's error type for each status of the error table (the status itself stays the table's). */
const TYPE_BY_STATUS: Partial<Record<number, ErrorType>> = {
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  // Busy, restarting, every endpoint down: retry later, which is what Anthropic's overloaded_error says.
  503: 'overloaded_error',
};

/**
 * An error of the table in Anthropic's shape, the one place the Messages routes map Hearth's
 * errors: the family's error handler renders with it, and a stream that already opened sends it
 * as its `error` event. Any other 4xx is invalid_request_error, any other 5xx api_error.
 */
export function anthropicError(error: HearthError): AnthropicErrorBody {
  const status = error.status;
  const type = TYPE_BY_STATUS[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  // The message as every shape words it (a `hearth <command>` spelled the way it runs here).
  const message = error.toBody().error.message;
  return { type: 'error', error: { type, message: error.code === 'context_length_exceeded' ? tooLong(message) : message } };
}

/**
 * A prompt longer than the context, opened with the words Anthropic's API uses for it ("prompt is
 * too long: N tokens > M maximum"): Claude Code reads them to compact the conversation.
 */
function tooLong(message: string): string {
  const counts = /(\d+) tokens, but .* context of (\d+) tokens/.exec(message);
  return counts ? `prompt is too long: ${counts[1]} tokens > ${counts[2]} maximum. ${message}` : `prompt is too long. ${message}`;
}
