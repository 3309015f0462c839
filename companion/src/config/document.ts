import { readFileSync, existsSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import { parse, YAMLParseError } from 'yaml';
import type { ConfigDocument } from '../../../shared/src/api/config.js';
import { writeFileAtomic } from '../store/files.js';
import { configSchema } from './schema.js';
import { normaliseMemorySettings } from '../memory/settings.js';

export class ConfigError extends Error {
  constructor(readonly file: string, readonly problems: string[]) {
    super(`${file} is not a valid Hearth configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false });
const validate = ajv.compile<ConfigDocument>(configSchema);

/** Validates a parsed document and fills in defaults; returns every problem with its path. */
export function checkDocument(value: unknown): { document?: ConfigDocument; problems: string[] } {
  const copy = structuredClone(value ?? {}) as Record<string, unknown>;
  if (validate(copy)) {
    (copy as { memory?: unknown }).memory = normaliseMemorySettings((copy as { memory?: Record<string, number> }).memory);
    const problems = duplicates(copy as unknown as ConfigDocument);
    return problems.length > 0 ? { problems } : { document: copy as unknown as ConfigDocument, problems };
  }
  return { problems: (validate.errors ?? []).map(describe) };
}

function duplicates(document: ConfigDocument): string[] {
  const seen = new Set<string>();
  return document.providers.flatMap((provider, index) => {
    if (seen.has(provider.name)) return [`providers[${index}].name: "${provider.name}" is used by an earlier provider`];
    seen.add(provider.name);
    return [];
  });
}

function describe(error: ErrorObject): string {
  const path = error.instancePath.replace(/^\//, '').replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.') || '(document)';
  if (error.keyword === 'additionalProperties') return `${path === '(document)' ? '' : `${path}.`}${String(error.params.additionalProperty)}: unknown key`;
  if (error.keyword === 'const' && path === 'version') return 'version: must be 1';
  return `${path}: ${error.message ?? 'is not valid'}`;
}

export const DEFAULT_DOCUMENT_TEXT = `# Hearth configuration. Every key is optional except version; see README.md.
version: 1
# server:
#   host: 127.0.0.1
#   port: 4777
# models:
#   dirs: []                 # extra folders with .gguf files
#   external_sources: true   # also list LM Studio, Ollama, Hugging Face and llama.cpp models
#   threads: auto            # measured per model
#   parallel: 4              # concurrent requests batched per model
# providers:
#   - name: openai
#     base_url: https://api.openai.com/v1
#     api_key: secret:OPENAI_API_KEY   # set with: hearth secret set OPENAI_API_KEY
`;

/** Reads `config.yaml`, writing the default document first when there is none. */
export function loadConfigFile(file: string): ConfigDocument {
  if (!existsSync(file)) writeFileAtomic(file, DEFAULT_DOCUMENT_TEXT);
  let parsed: unknown;
  try {
    parsed = parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const where = error instanceof YAMLParseError && error.linePos ? ` (line ${error.linePos[0].line})` : '';
    throw new ConfigError(file, [`not valid YAML${where}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`]);
  }
  const { document, problems } = checkDocument(parsed);
  if (!document) throw new ConfigError(file, problems);
  return document;
}
