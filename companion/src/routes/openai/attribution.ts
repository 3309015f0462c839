import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentSettings } from '#shared/api/config.js';
import { findAgent, partsText } from '../../agents/definitions.js';
import { HearthError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { OpenaiContext } from '../contexts.js';

/** An API exchange named by X-Service-Agent-Id: whose it is and which conversation it continues. */
export interface Attribution {
  agent: AgentSettings;
  conversationId: string;
  user: string;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new HearthError('invalid_request_error', `Send the ${name} header once.`, { param: name });
  return value.trim();
}

/**
 * Reads X-Service-Agent-Id (and X-Service-Conversation-Id) before anything is generated: an
 * unknown agent is 400 agent_not_found (the perimeter has already refused a key scoped to
 * another agent). The conversation id, given or new, goes back in X-Service-Conversation-Id.
 * Attribution only: the request itself is not changed (no memory, no tools, no rights).
 */
export function attributionOf(context: Pick<OpenaiContext, 'config'>, request: FastifyRequest, reply: FastifyReply, user: string): Attribution | null {
  const agentId = header(request, 'x-service-agent-id');
  if (agentId === undefined) return null;
  const agent = findAgent(context.config(), agentId, 'X-Service-Agent-Id');
  const given = header(request, 'x-service-conversation-id');
  if (given !== undefined && (given.length === 0 || given.length > 256))
    throw new HearthError('invalid_request_error', 'X-Service-Conversation-Id must be 1-256 characters.', { param: 'X-Service-Conversation-Id' });
  const conversationId = given ?? newId('conv_');
  void reply.header('x-service-conversation-id', conversationId);
  return { agent, conversationId, user };
}

/** Records the finished exchange as a turn of the agent's conversation and buffers it into its memory. */
export function recordAttribution(context: Pick<OpenaiContext, 'agents'>, request: FastifyRequest, attribution: Attribution | null, assistant: string): void {
  if (!attribution) return;
  try {
    context.agents.attribute(attribution.agent, attribution.conversationId, attribution.user, assistant);
  } catch (error) {
    request.log.error({ err: error }, 'recording an attributed exchange failed');
  }
}

/**
 * The text of the last user message of a request (chat messages or Responses input), tolerant of
 * any part types: an image is `[image]` and a sound `[audio]` in it, so the conversation and memory
 * keep words, never media.
 */
export function lastUserText(messages: unknown): string {
  if (typeof messages === 'string') return messages;
  if (!Array.isArray(messages)) return '';
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index] as { role?: string; content?: unknown } | null;
    if (message?.role !== 'user') continue;
    if (typeof message.content === 'string') return message.content;
    if (Array.isArray(message.content)) return partsText(message.content as { type?: unknown; text?: unknown }[]);
  }
  return '';
}
