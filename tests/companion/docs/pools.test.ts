import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { checkDocument } from '../../../companion/src/config/document.js';
import { ProviderClient } from '../../../companion/src/providers/client.js';
import { endpointsOf, isPool } from '../../../companion/src/providers/settings.js';

/*
 * Every configuration snippet of docs/pools.md (a yaml block that starts with `# config.yaml`) is
 * a valid Hearth configuration, and its providers become the pools the recipe describes. Each
 * recipe (a `###` section under "## Recipes", but for "What Hearth adds") has at least one.
 */

const DOCS = fileURLToPath(new URL('../../../docs/pools.md', import.meta.url));

interface Snippet {
  section: string;
  line: number;
  text: string;
}

function snippets(): Snippet[] {
  const found: Snippet[] = [];
  let section = '';
  let block: Snippet | undefined;
  for (const [index, line] of readFileSync(DOCS, 'utf8').split('\n').entries()) {
    if (block) {
      if (line === '```') {
        if (block.text.startsWith('# config.yaml\n')) found.push(block);
        block = undefined;
      } else block.text += `${line}\n`;
    } else if (line.startsWith('## ') || line.startsWith('### ')) section = line.replace(/^#+ /, '');
    else if (line === '```yaml') block = { section, line: index + 1, text: '' };
  }
  return found;
}

function recipes(): string[] {
  const text = readFileSync(DOCS, 'utf8');
  const part = text.slice(text.indexOf('\n## Recipes'), text.indexOf('\n## ', text.indexOf('\n## Recipes') + 1));
  return [...part.matchAll(/^### (.+)$/gm)].map((match) => match[1]!).filter((title) => title !== 'What Hearth adds');
}

describe('docs/pools.md', () => {
  it('has a configuration snippet in every recipe', () => {
    const titles = recipes();
    expect(titles).toEqual([
      'vLLM on one node with tensor parallelism',
      'vLLM on several nodes (its own Ray-based serving)',
      'llama-server replicas',
      "llama.cpp's RPC backend",
      'Ollama and LocalAI as endpoints',
    ]);
    for (const title of titles) expect(snippets().filter((snippet) => snippet.section === title).length, title).toBeGreaterThan(0);
  });

  it('has only valid configuration snippets, whose providers are pools of the endpoints they list', () => {
    const all = snippets();
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const snippet of all) {
      const where = `docs/pools.md:${snippet.line} (${snippet.section})`;
      const { document, problems } = checkDocument(parse(snippet.text));
      expect(problems, where).toEqual([]);
      expect(document!.providers.length, where).toBeGreaterThan(0);
      const client = new ProviderClient(document!.providers, () => 'a-secret-value');
      const status = client.status();
      document!.providers.forEach((provider, index) => {
        expect(isPool(provider), `${where}: ${provider.name}`).toBe(true);
        expect(status[index]!.endpoints.map((endpoint) => endpoint.url)).toEqual(endpointsOf(provider).map((endpoint) => endpoint.url.replace(/\/+$/, '')));
        expect(status[index]!.endpoints.every((endpoint) => endpoint.circuit === 'closed' && endpoint.outstanding === 0)).toBe(true);
      });
    }
  });
});
