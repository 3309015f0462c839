import { RESERVED_AGENT_IDS } from '#shared/api/agents.js';
import { AGENT_ID_PATTERN } from '../ids.js';

/** JSON Schema of the configuration document; validation and defaults both come from here. */
const APPROVALS = ['auto', 'ask', 'deny'];
const approval = (fallback: string) => ({ enum: APPROVALS, default: fallback });

/** A part of the document that may be left out (it is then all defaults): these fields and no other. */
const section = <const Properties extends object>(properties: Properties) =>
  ({ type: 'object', additionalProperties: false, default: {}, properties }) as const;

/** A list of records, empty by default: each has these fields and no other, `required` among them. */
const records = <const Required extends readonly string[], const Properties extends object>(required: Required, properties: Properties) =>
  ({ type: 'array', default: [], items: { type: 'object', additionalProperties: false, required, properties } }) as const;

const reference = { type: 'string', pattern: '^(secret|env):[A-Za-z_][A-Za-z0-9_]*$', description: 'secret:NAME or env:NAME' };

export const configSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  title: 'Hearth configuration',
  type: 'object',
  additionalProperties: false,
  required: ['version'],
  properties: {
    version: { const: 1 },
    server: section({
      host: { type: 'string', minLength: 1, default: '127.0.0.1' },
      port: { type: 'integer', minimum: 0, maximum: 65535, default: 4777 },
      body_limit_mb: { type: 'number', exclusiveMinimum: 0, maximum: 1024, default: 8 },
      auth: section({
        // Off by default on loopback; must be on before the server may listen beyond it.
        required: { type: 'boolean', default: false },
      }),
      cors: section({
        // Origins other than the companion's own that browsers may call from; "*" allows any (never with credentials).
        origins: { type: 'array', items: { type: 'string', pattern: '^(\\*|https?://[^/\\s]+)$' }, default: [] },
      }),
      // Extra Host names accepted besides loopback names and the bound address (DNS-rebinding defence).
      allowed_hosts: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
      limits: section({
        admin_body_kb: { type: 'integer', minimum: 1, maximum: 65536, default: 512 },
        tools_body_mb: { type: 'number', exclusiveMinimum: 0, maximum: 1024, default: 4 },
        memory_body_mb: { type: 'number', exclusiveMinimum: 0, maximum: 1024, default: 16 },
        images_body_mb: { type: 'number', exclusiveMinimum: 0, maximum: 1024, default: 64 },
        request_timeout_seconds: { type: 'integer', minimum: 1, maximum: 3600, default: 60 },
        streams_per_key: { type: 'integer', minimum: 1, maximum: 10000, default: 8 },
      }),
      // The secure channel for paired devices: a second listener, TLS 1.3 and client certificates only.
      remote: section({
        enabled: { type: 'boolean', default: false },
        host: { type: 'string', minLength: 1, default: '0.0.0.0' },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 4778 },
      }),
      // Ollama's API on 127.0.0.1 at Ollama's port, besides /api on the main listener: for apps that look for Ollama there.
      ollama: section({
        enabled: { type: 'boolean', default: false },
        port: { type: 'integer', minimum: 0, maximum: 65535, default: 11434 },
      }),
    }),
    models: section({
      dirs: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
      external_sources: { type: 'boolean', default: true },
      gpu: { enum: ['auto', 'cpu'], default: 'auto' },
      engine: { enum: ['auto', 'server', 'in-process'], default: 'auto' },
      // The native llama-server build for this CPU, made in the background after the quick build (off: never).
      native_build: { enum: ['auto', 'off'], default: 'auto' },
      threads: { anyOf: [{ const: 'auto' }, { type: 'integer', minimum: 1, maximum: 256 }], default: 'auto' },
      context_size: { type: 'integer', minimum: 256, maximum: 1048576, default: 4096 },
      parallel: { anyOf: [{ const: 'auto' }, { type: 'integer', minimum: 1, maximum: 64 }], default: 'auto' },
      queue_limit: { type: 'integer', minimum: 0, maximum: 10000, default: 64 },
      // Every setting that becomes a timer stays under Node's limit of 2^31 ms (about 24.8 days); past it a timer fires at once.
      idle_unload_seconds: { type: 'integer', minimum: 0, maximum: 604800, default: 600 },
      memory_budget_mb: { type: 'integer', minimum: 0, default: 0 },
      // Disk for each model's saved conversations on the llama-server engine (0 saves none).
      slot_cache_mb: { type: 'integer', minimum: 0, maximum: 1048576, default: 2048 },
      // Remote http(s) image URLs in chat requests (fetched for a local model's projector): off by default; public addresses only, unless a host is named.
      remote_images: section({
        enabled: { type: 'boolean', default: false },
        allowed_hosts: {
          type: 'array',
          default: [],
          maxItems: 100,
          items: {
            type: 'string',
            minLength: 1,
            maxLength: 300,
            pattern: '^[^\\s/@]+$',
            description: 'a host or host:port, fetched even on a private address',
          },
        },
      }),
      // Load settings of one local model (its id as GET /v1/models lists it); each field it leaves out follows the section above.
      overrides: {
        type: 'object',
        default: {},
        propertyNames: {
          type: 'string',
          pattern: '^[^/\\s]+$',
          description: 'a local model id (a provider model, <provider>/<model>, runs at its provider)',
        },
        additionalProperties: {
          type: 'object',
          additionalProperties: false,
          properties: {
            context_size: { type: 'integer', minimum: 256, maximum: 1048576 },
            // auto: as many layers as the GPU memory holds; 0 keeps the model on the CPU.
            gpu_layers: { anyOf: [{ const: 'auto' }, { type: 'integer', minimum: 0, maximum: 1024 }] },
            threads: { anyOf: [{ const: 'auto' }, { type: 'integer', minimum: 1, maximum: 256 }] },
            parallel: { anyOf: [{ const: 'auto' }, { type: 'integer', minimum: 1, maximum: 64 }] },
            // Its multimodal projector (an mmproj .gguf, by absolute path) or none; left out, one found beside the model file.
            projector: { type: 'string', minLength: 1, maxLength: 4096 },
            // A draft model for speculative decoding: a local model id with the same vocabulary (llama-server engine only), or none.
            draft: { type: 'string', minLength: 1, maxLength: 512, pattern: '^[^/\\s]+$' },
          },
        },
      },
    }),
    memory: {
      type: 'object',
      additionalProperties: false,
      default: {},
      description: 'Memory pipeline settings (docs/memory.md); out-of-range numbers are clamped into range when loaded (memory/settings.ts).',
      properties: {
        memory_budget_tokens: { type: 'number', default: 800, description: 'normalised into 100-4000' },
        summary_debounce_seconds: { type: 'number', default: 60, description: 'normalised into 10-3600' },
        consolidation_interval_hours: { type: 'number', default: 24, description: 'normalised into 1-168' },
        salience_floor: { type: 'number', default: 0.2, description: 'normalised into 0-1' },
        episode_retention_days: { type: 'number', default: 365, description: 'normalised into 0-3650; 0 keeps forever' },
        model: { type: 'string', minLength: 1, description: 'local model id used for distillation' },
        embedding_model: { type: 'string', minLength: 1, description: 'local embedding model id for hybrid search' },
      },
    },
    // Each needs base_url or endpoints besides its name (checked in providers/settings.ts, which says which is missing).
    providers: records(['name'], {
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$', maxLength: 64 },
      base_url: { type: 'string', pattern: '^https?://[^\\s?#]+$' },
      // A pool: servers of the same models, checked and failed over (docs/pools.md).
      endpoints: {
        type: 'array',
        minItems: 1,
        maxItems: 64,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['url'],
          properties: {
            url: { type: 'string', pattern: '^https?://[^\\s?#]+$' },
            weight: { type: 'number', exclusiveMinimum: 0, maximum: 1000 },
            max_concurrent: { type: 'integer', minimum: 1, maximum: 100000 },
          },
        },
      },
      health: {
        type: 'object',
        additionalProperties: false,
        properties: {
          // A path on the endpoint's own origin: `//host` or `/\host` would name another host (and send it the key).
          path: { type: 'string', pattern: '^/(?![/\\\\])', maxLength: 200, description: "a path on the endpoint's own server, starting with a single /" },
          interval_seconds: { type: 'number', minimum: 0.1, maximum: 3600 },
          failures_to_open: { type: 'integer', minimum: 1, maximum: 100 },
          open_seconds: { type: 'number', minimum: 0.1, maximum: 60 },
        },
      },
      api_key: reference,
      models: { type: 'array', items: { type: 'string', minLength: 1 } },
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      timeout_ms: { type: 'integer', minimum: 1000, maximum: 86400000 },
      // Models served through the provider's OpenAI Images routes (LocalAI, stable-diffusion.cpp's server, ...).
      image_models: { type: 'array', items: { type: 'string', minLength: 1 } },
    }),
    agents: records(['id'], {
      id: { type: 'string', pattern: AGENT_ID_PATTERN, not: { enum: [...RESERVED_AGENT_IDS] }, description: 'slug; "runs" and "approvals" are reserved' },
      name: { type: 'string', maxLength: 200 },
      description: { type: 'string', maxLength: 2000 },
      model: { type: 'string', minLength: 1 },
      instructions: { type: 'string' },
      // Exact names and globs (everything_*) over built-in and MCP service tools.
      tools: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 256 }, default: [] },
      // What the agent may do with each class of tool: run it, ask the owner first, or never.
      tool_policy: section({
        read: approval('auto'),
        write: approval('deny'),
        exec: approval('deny'),
        network: approval('ask'),
      }),
      // Per tool name; wins over the class policy.
      tool_overrides: { type: 'object', propertyNames: { minLength: 1, maxLength: 256 }, additionalProperties: { enum: APPROVALS }, default: {} },
      tool_choice: { enum: ['auto', 'required'], default: 'auto', description: 'required: the first model call of a run must call a tool' },
      memory: section({
        enabled: { type: 'boolean', default: true },
        budget_tokens: { type: 'integer', minimum: 100, maximum: 4000, description: 'default: the memory section budget' },
      }),
      // Absolute folder the file and shell tools are confined to; none = no file or shell tools.
      workspace: { type: 'string', pattern: '^/', minLength: 1 },
      max_steps: { type: 'integer', minimum: 1, maximum: 120, default: 30 },
      temperature: { type: 'number', minimum: 0, maximum: 2 },
      max_tokens: { type: 'integer', minimum: 1, maximum: 1048576 },
    }),
    agents_defaults: section({
      // A tool call waiting for the owner's decision longer than this is denied, and the model is told so.
      approval_timeout_seconds: { type: 'integer', minimum: 1, maximum: 86400, default: 600 },
      shell_timeout_seconds: { type: 'integer', minimum: 1, maximum: 3600, default: 60 },
      tool_output_kb: { type: 'integer', minimum: 1, maximum: 10240, default: 64 },
    }),
    images: section({
      dirs: { type: 'array', items: { type: 'string', minLength: 1 }, default: [] },
      hosted: section({
        // Paid hosted media generation; off unless deliberately enabled.
        enabled: { type: 'boolean', default: false },
        monthly_budget_usd: { type: 'number', minimum: 0, default: 0 },
      }),
    }),
    // Outbound MCP tool services. Token and header secrets are references only.
    mcp_services: {
      type: 'array',
      default: [],
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['name', 'transport'],
        properties: {
          name: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*$', maxLength: 32 },
          transport: { enum: ['stdio', 'http'] },
          command: { type: 'string', minLength: 1 },
          args: { type: 'array', items: { type: 'string' }, default: [] },
          env: { type: 'object', propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }, additionalProperties: { type: 'string' }, default: {} },
          cwd: { type: 'string', minLength: 1 },
          // A complete endpoint; no user:password@ (credentials go in auth; mcp/settings.ts also refuses them in the query).
          url: { type: 'string', pattern: '^https?://(?![^/?#]*@)[^\\s#]+$' },
          auth: {
            type: 'object',
            additionalProperties: false,
            required: ['type'],
            default: { type: 'none' },
            properties: {
              type: { enum: ['none', 'token', 'headers', 'oauth'] },
              token: reference,
              headers: { type: 'object', minProperties: 1, propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" }, additionalProperties: reference },
              scope: { type: 'string' },
              client_id: { type: 'string', minLength: 1 },
              client_secret: reference,
            },
            allOf: [
              { if: { properties: { type: { const: 'token' } } }, then: { required: ['token'] } },
              { if: { properties: { type: { const: 'headers' } } }, then: { required: ['headers'] } },
            ],
          },
          enabled: { type: 'boolean', default: true },
          auto_connect: { type: 'boolean', default: true },
          discovery_timeout_ms: { type: 'integer', minimum: 100, maximum: 600000, default: 10000 },
          tool_call_timeout_ms: { type: 'integer', minimum: 100, maximum: 3600000, default: 30000 },
          // What external clients (bridge, /mcp) see: read = read- and network-class tools only.
          expose: { enum: ['none', 'read', 'all'], default: 'read' },
          tool_classes: { type: 'object', additionalProperties: { enum: ['read', 'write', 'exec', 'network'] }, default: {} },
        },
        allOf: [
          { if: { properties: { transport: { const: 'stdio' } } }, then: { required: ['command'] } },
          { if: { properties: { transport: { const: 'http' } } }, then: { required: ['url'] } },
        ],
      },
    },
    // Hosts this companion is paired with as a device (hearth remote add); the credential is a secret.
    remote_hosts: records(['name', 'url', 'fingerprint', 'credential'], {
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$', maxLength: 64 },
      url: { type: 'string', pattern: '^https://[^\\s/?#@]+/?$' },
      fingerprint: { type: 'string', pattern: '^([0-9A-F]{2}:){31}[0-9A-F]{2}$', description: 'SHA-256 of the host certificate, AB:CD:...' },
      credential: { ...reference, pattern: '^secret:[A-Za-z_][A-Za-z0-9_]*$', description: 'secret:NAME' },
    }),
    // Cloud workspaces with published A2A agents, reached through an OAuth sign-in (hearth cloud login).
    cloud_workspaces: records(['name', 'workspace_id', 'issuer', 'client_id'], {
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$', maxLength: 64 },
      workspace_id: { type: 'string', minLength: 1, maxLength: 256 },
      workspace_claim: { type: 'string', minLength: 1, default: 'workspace_id' },
      issuer: { type: 'string', pattern: '^https?://(?![^/?#]*@)[^\\s?#]+$' },
      client_id: { type: 'string', minLength: 1 },
      client_secret: reference,
      scopes: { type: 'array', items: { type: 'string', pattern: '^\\S+$' }, default: ['openid', 'offline_access'] },
      grant: { enum: ['authorization_code', 'device_code'], default: 'authorization_code' },
      agent_cards: { type: 'array', items: { type: 'string', pattern: '^https?://(?![^/?#]*@)[^\\s#]+$' }, default: [] },
      directory: { type: 'string', pattern: '^https?://(?![^/?#]*@)[^\\s#]+$' },
    }),
    // Hosted (paid) media providers. Nothing is sent to one without a quote, a confirmation,
    // images.hosted.enabled and room in images.hosted.monthly_budget_usd.
    media_providers: records(['name', 'base_url', 'models'], {
      name: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$', maxLength: 64 },
      api: { enum: ['openai_videos'], default: 'openai_videos' },
      base_url: { type: 'string', pattern: '^https?://(?![^/?#]*@)[^\\s?#]+$' },
      api_key: reference,
      headers: { type: 'object', additionalProperties: { type: 'string' } },
      timeout_ms: { type: 'integer', minimum: 1000, maximum: 86400000 },
      models: {
        type: 'array',
        minItems: 1,
        items: {
          type: 'object',
          additionalProperties: false,
          required: ['id', 'usd_per_second'],
          properties: {
            id: { type: 'string', minLength: 1 },
            usd_per_second: { type: 'number', minimum: 0 },
            seconds: { type: 'array', items: { type: 'integer', minimum: 1, maximum: 600 }, minItems: 1, default: [4, 8, 12] },
            sizes: {
              type: 'array',
              items: { type: 'string', pattern: '^[1-9][0-9]{1,4}x[1-9][0-9]{1,4}$' },
              minItems: 1,
              default: ['720x1280', '1280x720'],
            },
            operations: {
              type: 'array',
              items: { enum: ['video.generate', 'video.from_image'] },
              minItems: 1,
              default: ['video.generate', 'video.from_image'],
            },
          },
        },
      },
      quote_ttl_seconds: { type: 'integer', minimum: 10, maximum: 86400, default: 600 },
      poll_interval_seconds: { type: 'number', minimum: 0.05, maximum: 3600, default: 10 },
    }),
  },
} as const;
