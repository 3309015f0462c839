/**
 * What Claude Code needs beyond the plain Messages API: a prompt that stays the same from one
 * request to the next (so the engine reuses its cached prefix), and an unknown-model answer that
 * says which settings point it at a Hearth model.
 */
import { HearthError } from '../../errors.js';

/**
 * Claude Code starts its system prompt with a line `x-anthropic-billing-header: cc_version=…;
 * cc_entrypoint=…; cch=…;` whose version suffix and `cch` hash change with every request. It
 * means nothing to a model, and at the very start of the prompt it would make every request's
 * prefix new: that line is left out (the rest of the block is kept as it is).
 */
export function withoutRequestStamp(text: string): string {
  return text.replace(/^x-anthropic-billing-header:[^\n]*(?:\n|$)/gm, '');
}

/**
 * The catalog's 404 for an unknown model (which lists the ids there are), with what a client of
 * Anthropic's API sets to use one of them: Claude Code asks for Claude model names unless told.
 */
export function withModelAdvice(error: unknown): unknown {
  if (!(error instanceof HearthError) || error.code !== 'model_not_found') return error;
  return new HearthError(
    'model_not_found',
    `${error.message} Hearth serves its own models, not Anthropic's: for Claude Code, set ANTHROPIC_BASE_URL to this server's address and ANTHROPIC_MODEL and ANTHROPIC_DEFAULT_HAIKU_MODEL to one of these ids.`,
    { param: error.param, cause: error },
  );
}
