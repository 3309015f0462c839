/**
 * Request-body schema of POST /v1/responses. Item, part, tool and tool_choice types are left
 * open so that provider models receive what they support; responses-convert.ts refuses, by
 * field, what local models cannot do.
 */
const nullableNumber = (minimum: number, maximum: number) => ({ type: ['number', 'null'], minimum, maximum });
const when = (type: string, required: string[]) => ({
  if: { type: 'object', properties: { type: { const: type } }, required: ['type'] },
  then: { type: 'object', required },
});

/** A string, else an array checked item by item (if/else rather than anyOf, so errors name the failing field). */
const stringOr = (schema: object) => ({ if: { type: 'string' }, else: schema });
const part = { type: { type: 'string' }, text: { type: 'string' } };
const textOrParts = (properties: object) => stringOr({ type: 'array', items: { type: 'object', required: ['type'], properties } });

const inputItem = {
  type: 'object',
  properties: {
    type: { type: 'string' },
    id: { type: 'string' },
    status: { type: 'string' },
    role: { enum: ['user', 'assistant', 'system', 'developer'] },
    // Assistant messages from an earlier response's output carry output_text parts with annotations.
    content: textOrParts({ ...part, annotations: { type: 'array' } }),
    call_id: { type: 'string', minLength: 1 },
    name: { type: 'string' },
    arguments: { type: 'string' },
    output: textOrParts(part),
  },
  allOf: [
    // A message may omit its type.
    { if: { type: 'object', properties: { type: { const: 'message' } } }, then: { type: 'object', required: ['role', 'content'] } },
    when('function_call', ['call_id', 'name', 'arguments']),
    when('function_call_output', ['call_id', 'output']),
  ],
};

const tool = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string' },
    name: { type: 'string', pattern: '^[A-Za-z0-9_-]{1,64}$' },
    description: { type: ['string', 'null'] },
    parameters: { type: ['object', 'null'] },
    strict: { type: ['boolean', 'null'] },
  },
  allOf: [when('function', ['name'])],
};

const textFormat = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'json_object', 'json_schema'] },
    name: { type: 'string' },
    schema: { type: 'object' },
    description: { type: 'string' },
    strict: { type: ['boolean', 'null'] },
  },
  allOf: [when('json_schema', ['name', 'schema'])],
};

export const responseCreateBody = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: stringOr({ type: 'array', items: inputItem }),
    instructions: { type: ['string', 'null'] },
    tools: { type: 'array', items: tool },
    tool_choice: {
      if: { type: 'string' },
      then: { enum: ['auto', 'none', 'required'] },
      else: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, name: { type: 'string' } }, allOf: [when('function', ['name'])] },
    },
    text: { type: ['object', 'null'], properties: { format: textFormat } },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1 },
    temperature: nullableNumber(0, 2),
    top_p: nullableNumber(0, 1),
    stream: { type: ['boolean', 'null'] },
    store: { type: ['boolean', 'null'] },
    previous_response_id: { type: ['string', 'null'] },
    metadata: { type: ['object', 'null'], maxProperties: 16, additionalProperties: { type: 'string', maxLength: 512 } },
    parallel_tool_calls: { type: ['boolean', 'null'] },
    user: { type: 'string' },
  },
} as const;

export const responseIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', minLength: 1 } },
} as const;
