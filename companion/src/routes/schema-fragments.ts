import type { JsonSchema } from './schema.js';

/**
 * Schema pieces that more than one protocol's body spells the same way: written once here so
 * chat completions, Responses and Ollama's chat accept the same thing for the same field.
 */

/** A function tool's name as OpenAI and Ollama accept it: 1 to 64 letters, digits, `_` or `-`. */
export const functionName = { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' } as const;

/**
 * A list of function tools, `{type: 'function', function: {name, description, parameters}}`
 * (chat completions, Ollama's chat); `extra` adds the protocol's own fields of `function`.
 */
export const functionTools = <Extra extends Readonly<Record<string, JsonSchema>>>(extra: Extra) =>
  ({
    type: 'array',
    items: {
      type: 'object',
      required: ['type', 'function'],
      properties: {
        type: { const: 'function' },
        function: {
          type: 'object',
          required: ['name'],
          properties: { name: functionName, description: { type: 'string' }, parameters: { type: 'object' }, ...extra },
        },
      },
    },
  }) as const;
