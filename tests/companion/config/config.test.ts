import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDocument, ConfigError, DEFAULT_DOCUMENT_TEXT, loadConfigFile } from '../../../companion/src/config/document.js';

let root: string;
let counter = 0;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hearth-config-'));
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** The ConfigError loadConfigFile throws for this text. */
function refused(text: string): ConfigError {
  const file = configFileWith(text);
  try {
    loadConfigFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    const config = error as ConfigError;
    expect(config.file).toBe(file);
    // The message names the file and lists every problem on its own line.
    expect(config.message).toContain(file);
    for (const problem of config.problems) expect(config.message).toContain(`  - ${problem}`);
    return config;
  }
  throw new Error(`loadConfigFile accepted:\n${text}`);
}

function configFileWith(text: string): string {
  const folder = join(root, `doc-${++counter}`);
  mkdirSync(folder, { recursive: true });
  const file = join(folder, 'config.yaml');
  writeFileSync(file, text);
  return file;
}

describe('loadConfigFile', () => {
  it('writes the default document when there is none, and it loads with every default filled in', () => {
    const folder = join(root, `fresh-${++counter}`, 'nested');
    const file = join(folder, 'config.yaml');
    expect(existsSync(file)).toBe(false);
    const document = loadConfigFile(file);
    expect(readFileSync(file, 'utf8')).toBe(DEFAULT_DOCUMENT_TEXT);
    expect(readdirSync(folder)).toEqual(['config.yaml']);
    // Other sections may be added over time; these defaults are the ones documented in the default text.
    expect(document).toMatchObject({
      version: 1,
      server: { host: '127.0.0.1', port: 4777, body_limit_mb: 8 },
      models: {
        dirs: [],
        external_sources: true,
        gpu: 'auto',
        threads: 'auto',
        context_size: 4096,
        parallel: 'auto',
        queue_limit: 64,
        idle_unload_seconds: 600,
        memory_budget_mb: 0,
      },
      providers: [],
    });
  });

  it('leaves an existing document untouched and loads it again the same way', () => {
    const file = configFileWith('version: 1\nserver:\n  port: 5000\nmodels:\n  parallel: 2\n');
    const before = readFileSync(file, 'utf8');
    const first = loadConfigFile(file);
    const second = loadConfigFile(file);
    expect(readFileSync(file, 'utf8')).toBe(before);
    expect(first).toEqual(second);
    expect(first.server).toMatchObject({ host: '127.0.0.1', port: 5000, body_limit_mb: 8 });
    expect(first.models.parallel).toBe(2);
    expect(first.models.context_size).toBe(4096);
  });

  it('accepts a full provider entry with references', () => {
    const document = loadConfigFile(
      configFileWith(
        [
          'version: 1',
          'providers:',
          '  - name: openai',
          '    base_url: https://api.openai.com/v1',
          '    api_key: secret:OPENAI_API_KEY',
          '    models: [gpt-4o-mini]',
          '    headers: { X-Org: env:ORG_ID }',
          '    timeout_ms: 5000',
          '  - name: local.llama',
          '    base_url: http://127.0.0.1:8080/v1',
          '    api_key: env:LLAMA_KEY',
        ].join('\n'),
      ),
    );
    expect(document.providers).toHaveLength(2);
    expect(document.providers[0]).toMatchObject({ name: 'openai', api_key: 'secret:OPENAI_API_KEY', models: ['gpt-4o-mini'], timeout_ms: 5000 });
    expect(document.providers[1]!.api_key).toBe('env:LLAMA_KEY');
  });

  it('refuses unknown keys, naming their path', () => {
    const error = refused(
      'version: 1\ncolour: red\nserver:\n  hots: 0.0.0.0\nmodels:\n  paralel: 2\nproviders:\n  - name: a\n    base_url: http://x/v1\n    apikey: secret:A\n',
    );
    expect(error.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^colour: unknown key/),
        expect.stringMatching(/^server\.hots: unknown key/),
        expect.stringMatching(/^models\.paralel: unknown key/),
        expect.stringMatching(/^providers\[0\]\.apikey: unknown key/),
      ]),
    );
    expect(error.problems).toHaveLength(4);
  });

  it('refuses wrong types, naming their path', () => {
    const error = refused('version: 1\nserver:\n  port: "4777"\n  host: 127\nmodels:\n  dirs: /models\n  external_sources: "yes"\n  parallel: 2.5\n');
    const text = error.problems.join('\n');
    expect(text).toMatch(/^server\.port: must be a whole number from 0 to 65535 \(line 3\)/m);
    expect(text).toMatch(/^server\.host: must be text \(line 4\)/m);
    expect(text).toMatch(/^models\.dirs: must be a list \(line 6\)/m);
    expect(text).toMatch(/^models\.external_sources: must be true or false \(line 7\)/m);
    expect(text).toMatch(/^models\.parallel: must be "auto" or a whole number from 1 to 64 \(line 8\)/m);
  });

  it("says what a setting accepts and shows the line of config.yaml, never the validator's words", () => {
    const error = refused('version: 1\nmodels:\n  threads: many\n  gpu: cuda\nserver:\n  prot: 4777\n');
    expect(error.problems).toEqual([
      'models.threads: must be "auto" or a whole number from 1 to 256 (line 3)\n      2 | models:\n    > 3 |   threads: many\n        |            ^\n      4 |   gpu: cuda',
      'models.gpu: must be one of: "auto", "cpu" (line 4)\n      3 |   threads: many\n    > 4 |   gpu: cuda\n        |        ^\n      5 | server:',
      'server.prot: unknown key (did you mean port?) (line 6)\n      5 | server:\n    > 6 |   prot: 4777\n        |   ^',
    ]);
    expect(error.message).not.toMatch(/anyOf|must match|must be equal to|schema|>=|<=/);
  });

  it('refuses out-of-range values, naming their path', () => {
    const error = refused(
      'version: 1\nserver:\n  port: 70000\n  body_limit_mb: 0\nmodels:\n  parallel: 0\n  context_size: 16\n  queue_limit: -1\n  threads: 0\n  gpu: cuda\n',
    );
    const text = error.problems.join('\n');
    expect(text).toMatch(/^server\.port: must be a whole number from 0 to 65535/m);
    expect(text).toMatch(/^server\.body_limit_mb: must be a number \(more than 0, at most 1024\)/m);
    expect(text).toMatch(/^models\.parallel: must be "auto" or a whole number from 1 to 64/m);
    expect(text).toMatch(/^models\.context_size: must be a whole number from 256 to /m);
    expect(text).toMatch(/^models\.queue_limit: must be a whole number from 0 to /m);
    expect(text).toMatch(/^models\.threads: /m);
    expect(text).toMatch(/^models\.gpu: /m);
  });

  it('refuses invalid YAML with the line of the mistake', () => {
    const error = refused('version: 1\nserver:\n  port: 4777\n  host: [127.0.0.1\nmodels:\n  parallel: 2\n');
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/not valid YAML \(line \d+\)/);
    // The lines around the mistake, numbered, with a caret.
    expect(error.problems[0]).toMatch(/\n {4}> +\d+ \| /);
    const line = Number(/line (\d+)/.exec(error.problems[0]!)![1]);
    expect(line).toBeGreaterThanOrEqual(4);
    expect(line).toBeLessThanOrEqual(6);
  });

  it('refuses YAML with a tab-indentation mistake on its line', () => {
    const error = refused('version: 1\nserver:\n\tport: 4777\n');
    expect(error.problems[0]).toMatch(/not valid YAML \(line 3\)/);
  });

  it('refuses version: 2 and a missing version', () => {
    expect(refused('version: 2\n').problems).toEqual(['version: must be 1 (line 1)\n    > 1 | version: 2\n        |          ^']);
    expect(refused('server:\n  port: 1\n').problems.join('\n')).toMatch(/version/);
  });

  it('refuses an empty or non-mapping document', () => {
    expect(refused('').problems.join('\n')).toMatch(/version/);
    expect(refused('- a\n- b\n').problems.join('\n')).toMatch(/must be a mapping/);
  });

  it('refuses a literal api_key, without repeating the key', () => {
    const literal = 'sk-live-1234567890abcdef';
    const error = refused(`version: 1\nproviders:\n  - name: openai\n    base_url: https://api.openai.com/v1\n    api_key: ${literal}\n`);
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toMatch(/^providers\[0\]\.api_key: /);
    expect(error.problems[0]).toMatch(/secret|env/);
    expect(error.message).not.toContain(literal);
  });

  it('refuses references that are not secret: or env:', () => {
    const error = refused(
      'version: 1\nproviders:\n  - name: a\n    base_url: https://a.example/v1\n    api_key: "vault:KEY"\n  - name: b\n    base_url: https://b.example/v1\n    api_key: "secret:has-dash"\n',
    );
    expect(error.problems.map((problem) => problem.split(':')[0])).toEqual(['providers[0].api_key', 'providers[1].api_key']);
  });

  it('refuses duplicate provider names, naming the later one', () => {
    const error = refused(
      'version: 1\nproviders:\n  - name: mock\n    base_url: http://127.0.0.1:1/v1\n  - name: other\n    base_url: http://127.0.0.1:2/v1\n  - name: mock\n    base_url: http://127.0.0.1:3/v1\n',
    );
    expect(error.problems).toEqual([expect.stringMatching(/^providers\[2\]\.name: "mock" is used by an earlier provider/)]);
  });

  it('refuses a provider without name or base_url and a bad base_url', () => {
    const error = refused(
      'version: 1\nproviders:\n  - base_url: http://127.0.0.1:1/v1\n  - name: b\n  - name: c\n    base_url: ftp://example.com\n  - name: Has Space\n    base_url: http://x/v1\n',
    );
    const text = error.problems.join('\n');
    expect(text).toMatch(/^providers\[0\]\.name: is required/m);
    expect(text).toMatch(/^providers\[1\]: needs base_url \(one server\) or endpoints/m);
    expect(text).toMatch(/^providers\[2\]\.base_url: /m);
    expect(text).toMatch(/^providers\[3\]\.name: /m);
  });
});

describe('checkDocument', () => {
  it('fills defaults without changing its argument', () => {
    const input = { version: 1, models: { parallel: 8 } };
    const { document, problems } = checkDocument(input);
    expect(problems).toEqual([]);
    expect(document!.models.parallel).toBe(8);
    expect(document!.server.port).toBe(4777);
    expect(input).toEqual({ version: 1, models: { parallel: 8 } });
  });

  it('reports every schema problem at once, each with its path', () => {
    const { document, problems } = checkDocument({
      version: 2,
      extra: true,
      server: { port: -1, host: '' },
      models: { parallel: 'four', dirs: [''] },
      providers: [{ name: 'p', base_url: 'http://x/v1', api_key: 'plain-key' }],
    });
    expect(document).toBeUndefined();
    const text = problems.join('\n');
    for (const path of ['version', 'extra', 'server.port', 'server.host', 'models.parallel', 'models.dirs[0]', 'providers[0].api_key']) {
      expect(text, `problem for ${path}`).toMatch(new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}[.:]`, 'm'));
    }
  });

  it('reports duplicate provider names together with the other problems', () => {
    const { document, problems } = checkDocument({
      version: 1,
      server: { port: 'abc' },
      providers: [
        { name: 'mock', base_url: 'http://127.0.0.1:1/v1' },
        { name: 'mock', base_url: 'http://127.0.0.1:2/v1' },
      ],
    });
    expect(document).toBeUndefined();
    expect(problems).toEqual(expect.arrayContaining([expect.stringMatching(/^server\.port: /), expect.stringMatching(/^providers\[1\]\.name: "mock"/)]));
  });
});
