/** Request-body schema of POST /v1/chat/completions: types are checked here, meaning in convert.ts. */
const nullableNumber = (minimum: number, maximum: number) => ({ type: ['number', 'null'], minimum, maximum });
const content = {
  anyOf: [
    { type: 'string' },
    { type: 'null' },
    {
      type: 'array',
      items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, text: { type: 'string' } } },
    },
  ],
};

export const chatCompletionBody = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: {
          role: { enum: ['system', 'developer', 'user', 'assistant', 'tool'] },
          content,
          name: { type: 'string' },
          tool_call_id: { type: 'string' },
          tool_calls: {
            type: 'array',
            items: {
              type: 'object',
              required: ['id', 'function'],
              properties: {
                id: { type: 'string' },
                type: { const: 'function' },
                function: { type: 'object', required: ['name', 'arguments'], properties: { name: { type: 'string' }, arguments: { type: 'string' } } },
              },
            },
          },
        },
      },
    },
    stream: { type: ['boolean', 'null'] },
    stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } } },
    max_tokens: { type: ['integer', 'null'], minimum: 1 },
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
    temperature: nullableNumber(0, 2),
    top_p: nullableNumber(0, 1),
    seed: { type: ['integer', 'null'] },
    stop: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string', minLength: 1 }, maxItems: 4 }, { type: 'null' }] },
    presence_penalty: nullableNumber(-2, 2),
    frequency_penalty: nullableNumber(-2, 2),
    n: { type: ['integer', 'null'], minimum: 1, maximum: 1 },
    logprobs: { type: ['boolean', 'null'] },
    parallel_tool_calls: { type: 'boolean' },
    user: { type: 'string' },
    tools: {
      type: 'array',
      items: {
        type: 'object',
        required: ['type', 'function'],
        properties: {
          type: { const: 'function' },
          function: {
            type: 'object',
            required: ['name'],
            properties: {
              name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
              description: { type: 'string' },
              parameters: { type: 'object' },
              strict: { type: ['boolean', 'null'] },
            },
          },
        },
      },
    },
    tool_choice: {
      anyOf: [
        { enum: ['auto', 'none', 'required'] },
        {
          type: 'object',
          required: ['type', 'function'],
          properties: { type: { const: 'function' }, function: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
        },
      ],
    },
    response_format: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { enum: ['text', 'json_object', 'json_schema'] },
        json_schema: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, description: { type: 'string' }, schema: { type: 'object' }, strict: { type: ['boolean', 'null'] } },
        },
      },
    },
  },
} as const;
