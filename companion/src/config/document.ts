import { readFileSync, existsSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse, YAMLParseError } from 'yaml';
import type { ConfigDocument } from '#shared/api/config.js';
import { writeFileAtomic } from '../store/files.js';
import { NAMED_LISTS } from './merge.js';
import { credentialsInUrls } from './destinations.js';
import { renameLegacyKeys } from './legacy-keys.js';
import { describeSchemaErrors, frame, locateProblems } from './problems.js';
import { explainDuplicate } from './duplicate-keys.js';
import { configSchema } from './schema.js';
import { normaliseMemorySettings } from '../memory/settings.js';
import { checkMcpServices } from '../mcp/settings.js';
import { checkCloudWorkspaces } from '../cloud/settings.js';
import { checkProviders } from '../providers/settings.js';

export class ConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is not a valid Hearth configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

// verbose: each error carries its schema, so a problem can say what the setting accepts.
const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, verbose: true });
const validate = ajv.compile<ConfigDocument>(configSchema);

/** Validates a parsed document and fills in defaults; returns every problem with its path. */
export function checkDocument(value: unknown): { document?: ConfigDocument; problems: string[] } {
  const copy = structuredClone(value ?? {}) as Record<string, unknown>;
  const valid = validate(copy);
  const schemaProblems = valid ? [] : describeSchemaErrors(validate.errors ?? []);
  const listProblems = [
    ...duplicates(copy),
    ...checkProviders(copy.providers),
    ...checkMcpServices(copy.mcp_services),
    ...credentialsInUrls(copy),
    ...checkCloudWorkspaces(copy.cloud_workspaces),
  ];
  if (!valid || listProblems.length > 0) return { problems: [...schemaProblems, ...listProblems] };
  const document = copy as unknown as ConfigDocument;
  document.memory = normaliseMemorySettings(document.memory);
  return { document, problems: [] };
}

const ENTRY_NAMES: Record<string, string> = {
  providers: 'provider',
  mcp_services: 'service',
  agents: 'agent',
  media_providers: 'media provider',
  remote_hosts: 'host',
  cloud_workspaces: 'workspace',
};

/** Named list items must have distinct names, or plan/apply could not tell them apart. */
function duplicates(document: Record<string, unknown>): string[] {
  return Object.entries(NAMED_LISTS).flatMap(([section, key]) => {
    const items = document[section];
    if (!Array.isArray(items)) return [];
    const seen = new Set<unknown>();
    return items.flatMap((item: Record<string, unknown>, index) => {
      const name = item?.[key];
      if (name === undefined) return [];
      if (seen.has(name)) return [`${section}[${index}].${key}: "${String(name)}" is used by an earlier ${ENTRY_NAMES[section] ?? 'entry'}`];
      seen.add(name);
      return [];
    });
  });
}

export const DEFAULT_DOCUMENT_TEXT = `# Hearth configuration. Every key is optional except version; see docs/configuration.md.
version: 1
# server:
#   host: 127.0.0.1
#   port: 4777
# models:
#   dirs: []                 # extra folders with .gguf files
#   external_sources: true   # also list LM Studio, Ollama, Hugging Face and llama.cpp models
#   engine: auto             # llama-server once it is built, else in-process; or: server, in-process
#   threads: auto            # chosen per batch size by measuring, re-measured when the load changes
#   parallel: auto           # concurrent requests batched per model; auto follows model size and memory
# providers:
#   - name: openai
#     base_url: https://api.openai.com/v1
#     api_key: secret:OPENAI_API_KEY   # set with: hearth secret set OPENAI_API_KEY
`;

/**
 * Reads `config.yaml`, writing the default document first when there is none. Old spellings of
 * renamed keys are read under their new names; `warn` hears one line for each.
 */
export function loadConfigFile(file: string, warn: (message: string) => void = () => undefined): ConfigDocument {
  if (!existsSync(file)) writeFileAtomic(file, DEFAULT_DOCUMENT_TEXT);
  const text = readFileSync(file, 'utf8');
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (error) {
    const position = error instanceof YAMLParseError ? error.linePos?.[0] : undefined;
    // The parser's first line says what is wrong (its own excerpt follows it; ours replaces it).
    let what = (error instanceof Error ? error.message.split('\n')[0]! : String(error)).replace(/ at line \d+, column \d+:?$/, '');
    // A key written twice: the parser names the second place only.
    what = explainDuplicate(text, error) ?? what;
    throw new ConfigError(file, [
      position ? `not valid YAML (line ${position.line}): ${what}\n${frame(text.split('\n'), position.line, position.col)}` : `not valid YAML: ${what}`,
    ]);
  }
  const warnings = renameLegacyKeys(parsed);
  const { document, problems } = checkDocument(parsed);
  if (!document) throw new ConfigError(file, locateProblems(text, problems));
  for (const warning of warnings) warn(`${file}: ${warning}`);
  return document;
}
