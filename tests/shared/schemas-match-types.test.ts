import { describe, expect, it } from 'vitest';
import { configSchema } from '../../companion/src/config/schema.js';
import { chatCompletionBody } from '../../companion/src/routes/openai/chat-schema.js';
import { embeddingBody } from '../../companion/src/routes/openai/embeddings-schema.js';
import { responseCreateBody } from '../../companion/src/routes/openai/responses-schema.js';
import * as memory from '../../companion/src/routes/memory/schemas.js';
import { fieldDifferences } from './schema-fields.js';
import { exportedType, program, sharedFile } from './typescript.js';

/*
 * The hand-written request schemas (Ajv) and the configuration schema name exactly the fields of
 * the shared/ wire types they validate, at every depth: a field added, renamed or removed on one
 * side only fails here. The field lists come from the types through the TypeScript compiler.
 */

const FILES = ['openai.ts', 'responses.ts', 'memory.ts', 'config.ts'].map(sharedFile);
const built = program(FILES);
const checker = built.getTypeChecker();
const type = (file: string, name: string) => exportedType(built, sharedFile(file), name);

const PAIRS: [string, object, string, string][] = [
  ['POST /v1/chat/completions', chatCompletionBody, 'openai.ts', 'ChatCompletionRequest'],
  ['POST /v1/responses', responseCreateBody, 'responses.ts', 'ResponseCreateRequest'],
  ['POST /v1/embeddings', embeddingBody, 'openai.ts', 'EmbeddingRequest'],
  ['POST /memory/ingest', memory.ingestBody, 'memory.ts', 'MemoryIngestRequest'],
  ['POST /memory/delegated', memory.delegatedBody, 'memory.ts', 'MemoryDelegatedRequest'],
  ['POST /memory/flush', memory.flushBody, 'memory.ts', 'MemoryFlushRequest'],
  ['POST /memory/search', memory.searchBody, 'memory.ts', 'MemorySearchRequest'],
  ['POST /memory/context', memory.contextBody, 'memory.ts', 'MemoryContextRequest'],
  ['POST /memory/consolidate', memory.consolidateBody, 'memory.ts', 'MemoryConsolidateRequest'],
  ['config.yaml', configSchema, 'config.ts', 'ConfigDocument'],
];

describe('schemas and shared types name the same fields', () => {
  it.each(PAIRS)('%s', (_route, schema, file, name) => {
    expect(fieldDifferences(checker, schema, type(file, name))).toEqual([]);
  });

  it('a field on one side only is reported with its path', () => {
    const schema = { type: 'object', properties: { model: {}, messages: { type: 'array', items: { properties: { role: {}, mood: {} } } } } };
    const differences = fieldDifferences(checker, schema, type('openai.ts', 'ChatCompletionRequest'));
    expect(differences[0]).toMatch(/^\(root\): only in the schema \[\], only in the type \[.*frequency_penalty.*\]$/);
    expect(differences[1]).toBe('messages[]: only in the schema [mood], only in the type [content, name, tool_call_id, tool_calls]');
  });
});
