/** JSON Schema of the configuration document; validation and defaults both come from here. */
const reference = { type: 'string', pattern: '^(secret|env):[A-Za-z_][A-Za-z0-9_]*$', description: 'secret:NAME or env:NAME' };

export const configSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Hearth configuration',
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { const: 1 },
    server: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        host: { type: 'string', minLength: 1, default: '127.0.0.1' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 4777 },
        body_limit_mb: { type: 'number', exclusiveMinimum: 0, maximum: 1024, default: 8 },
      },
    },
    models: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        dirs: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
        external_sources: { type: 'boolean', default: true },
        gpu: { enum: ['auto', 'cpu'], default: 'auto' },
        threads: { anyOf: [{ const: 'auto' }, { type: 'integer', minimum: 1, maximum: 256 }], default: 'auto' },
        context_size: { type: 'integer', minimum: 256, maximum: 1048576, default: 4096 },
        parallel: { type: 'integer', minimum: 1, maximum: 64, default: 4 },
        queue_limit: { type: 'integer', minimum: 0, maximum: 10000, default: 64 },
        idle_unload_seconds: { type: 'integer', minimum: 0, default: 600 },
        memory_budget_mb: { type: 'integer', minimum: 0, default: 0 },
      },
    },
    providers: {
      type: 'array',
      default: [],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'base_url'],
        properties: {
          name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$', maxLength: 64 },
          base_url: { type: 'string', pattern: '^https?://[^\\s?#]+$' },
          api_key: reference,
          models: { type: 'array', items: { type: 'string', minLength: 1 } },
          headers: { type: 'object', additionalProperties: { type: 'string' } },
          timeout_ms: { type: 'integer', minimum: 1000 },
        },
      },
    },
  },
} as const;
