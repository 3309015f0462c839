import type { JsonSchema } from '#shared/api/openai.js';
import { isObject, parseJson } from '../json.js';
import { dayOf } from './text.js';
import type { TurnRow } from './transcript.js';

/** What one extraction pass yields (docs/memory.md): an episode, entities, identity changes, candidate facts. */
export interface Extraction {
  episode: { summary: string; topics: string[]; decisions: string[] };
  entities: { name: string; kind: string }[];
  /** An empty value removes the entry. */
  identity: { key: string; value: string }[];
  facts: string[];
}

export const ENTITY_KINDS = ['person', 'place', 'organisation', 'thing', 'event', 'other'] as const;

/** Bounded lengths and counts keep any model, even a weak one, inside a known number of tokens. */
export const EXTRACTION_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['episode', 'entities', 'identity', 'facts'],
  additionalProperties: false,
  properties: {
    episode: {
      type: 'object',
      required: ['summary', 'topics', 'decisions'],
      additionalProperties: false,
      properties: {
        summary: { type: 'string', minLength: 1, maxLength: 320 },
        topics: { type: 'array', maxItems: 4, items: { type: 'string', minLength: 1, maxLength: 32 } },
        decisions: { type: 'array', maxItems: 3, items: { type: 'string', minLength: 1, maxLength: 120 } },
      },
    },
    entities: {
      type: 'array',
      maxItems: 5,
      items: {
        type: 'object',
        required: ['name', 'kind'],
        additionalProperties: false,
        properties: { name: { type: 'string', minLength: 1, maxLength: 48 }, kind: { enum: [...ENTITY_KINDS] } },
      },
    },
    identity: {
      type: 'array',
      maxItems: 3,
      items: {
        type: 'object',
        required: ['key', 'value'],
        additionalProperties: false,
        properties: { key: { type: 'string', minLength: 1, maxLength: 32 }, value: { type: 'string', maxLength: 120 } },
      },
    },
    facts: { type: 'array', maxItems: 4, items: { type: 'string', minLength: 1, maxLength: 160 } },
  },
};

/** Enough for the largest answer the schema allows with word-sized tokens, plus JSON punctuation. */
export const EXTRACTION_MAX_TOKENS = 900;

export const EXTRACTION_SYSTEM = `You maintain the long-term memory of an assistant. From the conversation below, write JSON with:
- episode: a short summary of what happened, its topics, and any decisions taken;
- entities: people, places, organisations, things and events that matter;
- identity: changes to stable facts about the person or the assistant (key and value; an empty value removes the key);
- facts: durable facts worth remembering across sessions, each one short sentence. A short exchange may have none.
Only state what the conversation supports.`;

/** The prompt of one pass: current identity, then the turns under one date header per day. */
export function extractionPrompt(turns: TurnRow[], identity: { key: string; value: string }[]): string {
  const parts: string[] = [];
  if (identity.length > 0) parts.push(`Known identity:\n${identity.map((entry) => `${entry.key}: ${entry.value}`).join('\n')}`);
  let day = '';
  const lines: string[] = [];
  for (const turn of turns) {
    const date = dayOf(turn.session_date, turn.created_at);
    if (date !== day) lines.push(`[${date}]`);
    day = date;
    if (turn.user_text) lines.push(`user: ${turn.user_text}`);
    if (turn.assistant_text) lines.push(`assistant: ${turn.assistant_text}`);
  }
  parts.push(`Conversation:\n${lines.join('\n')}`);
  return parts.join('\n\n');
}

/** Parses and tidies a model's answer; undefined when it is not the expected shape (e.g. cut off). */
export function parseExtraction(text: string): Extraction | undefined {
  const value = parseJson(text);
  if (!isObject(value) || !isObject(value.episode)) return undefined;
  const strings = (list: unknown) =>
    Array.isArray(list)
      ? list
          .filter((item): item is string => typeof item === 'string')
          .map((item) => item.trim())
          .filter(Boolean)
      : [];
  const summary = typeof value.episode.summary === 'string' ? value.episode.summary.trim() : '';
  if (!summary) return undefined;
  const kinds = new Set<string>(ENTITY_KINDS);
  return {
    episode: { summary, topics: strings(value.episode.topics), decisions: strings(value.episode.decisions) },
    entities: (Array.isArray(value.entities) ? value.entities : [])
      .filter(isObject)
      .map((entity) => ({ name: String(entity.name ?? '').trim(), kind: kinds.has(String(entity.kind)) ? String(entity.kind) : 'other' }))
      .filter((entity) => entity.name),
    identity: (Array.isArray(value.identity) ? value.identity : [])
      .filter(isObject)
      .map((entry) => ({ key: String(entry.key ?? '').trim(), value: String(entry.value ?? '').trim() }))
      .filter((entry) => entry.key),
    facts: strings(value.facts),
  };
}
