/**
 * The bodies of POST /v1/messages and /v1/messages/count_tokens: types are checked here, meaning
 * (block types, tool ids, server tools) in convert.ts, which names the field it refuses. Fields
 * Hearth does not read (Anthropic's betas: context_management, service_tier, ...) are let through.
 */
import { nonEmptyArray, nonEmptyString, type BodySchema } from '../schema.js';
import type { CountTokensRequest, MessageCreateRequest } from '#shared/api/anthropic.js';

const when = (type: string, required: string[]) => ({
  if: { type: 'object', properties: { type: { const: type } }, required: ['type'] },
  then: { type: 'object', required },
});

/** A string, else an array checked item by item (if/else rather than anyOf, so errors name the failing field). */
const stringOr = (schema: object) => ({ if: { type: 'string' }, else: schema });

const cacheControl = { type: ['object', 'null'] };

const textBlock = {
  type: 'object',
  required: ['type', 'text'],
  properties: { type: { const: 'text' }, text: { type: 'string' }, cache_control: cacheControl },
};

const imageSource = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string' }, media_type: { type: 'string' }, data: { type: 'string' }, url: { type: 'string' } },
};

/** Inside a tool_result: text and images (convert.ts places each image in the result's text). */
const resultPart = {
  type: 'object',
  required: ['type'],
  properties: { type: { type: 'string' }, text: { type: 'string' }, source: imageSource, cache_control: cacheControl },
  allOf: [when('text', ['text']), when('image', ['source'])],
};

const block = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string' },
    text: { type: 'string' },
    source: imageSource,
    id: nonEmptyString(),
    name: { type: 'string' },
    input: { type: 'object' },
    tool_use_id: nonEmptyString(),
    content: stringOr({ type: 'array', items: resultPart }),
    is_error: { type: 'boolean' },
    thinking: { type: 'string' },
    signature: { type: 'string' },
    data: { type: 'string' },
    cache_control: cacheControl,
  },
  allOf: [
    when('text', ['text']),
    when('image', ['source']),
    when('tool_use', ['id', 'name', 'input']),
    when('tool_result', ['tool_use_id']),
    when('thinking', ['thinking']),
    when('redacted_thinking', ['data']),
  ],
};

const conversation = {
  model: nonEmptyString(),
  messages: nonEmptyArray({
    type: 'object',
    required: ['role', 'content'],
    properties: { role: { enum: ['user', 'assistant', 'system'] }, content: stringOr({ type: 'array', items: block }) },
  }),
  system: stringOr({ type: 'array', items: textBlock }),
  tools: {
    type: 'array',
    items: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,128}$' },
        description: { type: 'string' },
        input_schema: { type: 'object' },
        type: { type: 'string' },
        cache_control: cacheControl,
      },
    },
  },
  tool_choice: {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: ['auto', 'any', 'none', 'tool'] }, name: { type: 'string' }, disable_parallel_tool_use: { type: 'boolean' } },
    allOf: [when('tool', ['name'])],
  },
  thinking: {
    type: 'object',
    required: ['type'],
    properties: { type: { enum: ['enabled', 'disabled', 'adaptive'] }, budget_tokens: { type: 'integer', minimum: 1 } },
    allOf: [when('enabled', ['budget_tokens'])],
  },
} as const;

export const messageCreateBody = {
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  properties: {
    ...conversation,
    max_tokens: { type: 'integer', minimum: 1 },
    stream: { type: 'boolean' },
    stop_sequences: { type: 'array', items: nonEmptyString() },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    // Claude Code's is a JSON object of device, account and session ids (about 170 characters).
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'], maxLength: 1024 } } },
  },
} as const satisfies BodySchema<MessageCreateRequest>;

export const countTokensBody = {
  type: 'object',
  required: ['model', 'messages'],
  properties: conversation,
} as const satisfies BodySchema<CountTokensRequest>;
