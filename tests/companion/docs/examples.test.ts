import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { familyOf } from '../../../companion/src/http/perimeter.js';
import { REPO_ROOT } from '../../helpers/hearth-process.js';
import { documentedRoutes, type DocumentedRoute } from '../../helpers/routes.js';
import { testApp, type TestApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';
import { codeBlocks, documentationPages, readPage, shellCommands } from './pages.js';

/*
 * Every curl example in the README and docs/*.md is checked against what Hearth serves: its
 * method and path are a route of docs/routes.md (which tests/companion/docs/routes.test.ts ties to
 * the app), a `-d` body is JSON sent as JSON, and the request itself, sent to the real app, is not
 * refused for its form: no unknown route, no schema or JSON problem, no missing credential. An
 * example's answer may still be "no such model" or "no such run": the pages use ids a reader has,
 * this test's data folder has not.
 */

interface Example {
  where: string;
  method: string;
  url: URL;
  headers: [string, string][];
  /** `-d`: the body as written. */
  data?: string;
  /** `-F`: name and value (`@file` for a file). */
  form: [string, string][];
  /** The status a `# HTTP/1.1 NNN` comment after the command documents. */
  documentedStatus?: number;
}

/** Options of curl the examples use: those followed by a value, and those that stand alone. */
const WITH_VALUE = new Set(['-H', '--header', '-d', '--data', '--data-raw', '-F', '--form', '-X', '--request', '-o', '--output']);
const ALONE = new Set(['-N', '--no-buffer', '-i', '--include', '-s', '--silent', '-S', '-f', '--fail', '-L']);

function curlExamples(): Example[] {
  const examples: Example[] = [];
  for (const page of documentationPages())
    for (const block of codeBlocks(page)) {
      if (!/\bcurl\b/.test(block.text) || ['yaml', 'ts', 'js', 'json'].includes(block.language)) continue;
      for (const command of shellCommands(block)) {
        if (command.words[0] !== 'curl') continue;
        examples.push(parseCurl(`${page}:${command.line}`, command.words.slice(1), command.text));
      }
    }
  return examples;
}

/** An id the reader fills in (`run_…`, `"conv_…"`) becomes one of the right form. */
const filledIn = (text: string) => text.replace(/\b([a-z]+_)…/g, '$1docs0example');

function parseCurl(where: string, written: string[], text: string): Example {
  const words = written.map(filledIn);
  const example: Omit<Example, 'url' | 'method'> & { url?: URL; method?: string } = { where, headers: [], form: [] };
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    if (WITH_VALUE.has(word)) {
      const value = words[++index];
      if (value === undefined) throw new Error(`${where}: ${word} has no value`);
      if (word === '-H' || word === '--header') {
        const colon = value.indexOf(':');
        example.headers.push([value.slice(0, colon).trim().toLowerCase(), value.slice(colon + 1).trim()]);
      } else if (word.startsWith('-d') || word.startsWith('--data')) example.data = value;
      else if (word === '-F' || word === '--form') {
        const equals = value.indexOf('=');
        example.form.push([value.slice(0, equals), value.slice(equals + 1)]);
      } else if (word === '-X' || word === '--request') example.method = value;
    } else if (ALONE.has(word)) continue;
    else if (word.startsWith('-')) throw new Error(`${where}: this test does not know the curl option ${word}; teach it (WITH_VALUE or ALONE)`);
    else if (/^https?:\/\//.test(word)) example.url = new URL(word);
    else throw new Error(`${where}: a second address or a stray word: ${word}`);
  }
  if (!example.url) throw new Error(`${where}: no address`);
  const status = /^# HTTP\/1\.1 (\d{3})/m.exec(text)?.[1];
  return {
    ...example,
    url: example.url,
    method: example.method ?? (example.data !== undefined || example.form.length > 0 ? 'POST' : 'GET'),
    documentedStatus: status ? Number(status) : undefined,
  };
}

/** The docs/routes.md line for an example's method and path, in the listener its port names. */
function routeOf(example: Example, routes: DocumentedRoute[]): DocumentedRoute | undefined {
  const section = example.url.port === '4778' ? 'The secure channel' : 'The local listener';
  return routes.find((route) => {
    if (route.section !== section || route.method !== example.method) return false;
    const pattern = route.path
      .replace(/[.+?^$()|[\]\\]/g, '\\$&')
      .replace(/\{[^}]+\}/g, '[^/]+')
      .replace(/\*/g, '.+');
    return new RegExp(`^${pattern}$`).test(example.url.pathname);
  });
}

/** What an answer's code says about the example: refused for its own form, or fine. */
const REFUSALS = new Set([
  'route_not_found',
  'method_not_allowed',
  'invalid_request_error',
  'invalid_json',
  'unsupported_media_type',
  'request_too_large',
  'uri_too_long',
  'invalid_api_key',
  'admin_credential_required',
  'permission_denied',
  'host_not_allowed',
  'origin_not_allowed',
  'upgrade_required',
  'internal_error',
  // Anthropic's shape (the Messages routes) has no code: its error type stands for it.
  'authentication_error',
  'permission_error',
  'api_error',
]);

const examples = curlExamples();
const routes = documentedRoutes(join(REPO_ROOT, 'docs', 'routes.md'));
const routesPage = readFileSync(join(REPO_ROOT, 'docs', 'routes.md'), 'utf8').split('\n');
let app: TestApp;
let key: string;
let picture: Buffer;

beforeAll(async () => {
  // The agents the examples name exist, so their bodies are read; their model does not, so nothing runs long.
  const dataDir = await newDataDir(false);
  writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\nagents:\n  - { id: scribe, model: tiny }\n  - { id: helper, model: tiny }\n');
  app = await testApp({ dataDir });
  key = app.services.keys.create({ label: 'examples' }).key;
  picture = await sharp({ create: { width: 8, height: 8, channels: 4, background: '#884422ff' } })
    .png()
    .toBuffer();
});

afterAll(async () => {
  await app?.close();
});

/** The example as the app receives it: the reader's credentials replaced by this data folder's. */
async function send(example: Example): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = {};
  for (const [name, value] of example.headers) {
    if (name === 'x-api-key' && /\$HEARTH_KEY|hth_/.test(value)) headers[name] = key;
    else if (name !== 'authorization') headers[name] = value;
    else if (value.includes('admin-token')) headers[name] = `Bearer ${app.services.admin.token}`;
    else if (/\$HEARTH_KEY|hth_/.test(value)) headers[name] = `Bearer ${key}`;
    else throw new Error(`${example.where}: an Authorization this test cannot stand in for: ${value}`);
  }
  const request: InjectOptions = {
    method: example.method as InjectOptions['method'],
    url: `${example.url.pathname}${example.url.search}`,
    headers,
    // An example addressed to another machine comes from another machine.
    remoteAddress: ['127.0.0.1', 'localhost'].includes(example.url.hostname) ? '127.0.0.1' : example.url.hostname,
  };
  if (example.data !== undefined) request.payload = example.data;
  if (example.form.length > 0) {
    const form = new FormData();
    for (const [name, value] of example.form)
      if (value.startsWith('@')) form.append(name, new Blob([new Uint8Array(picture)], { type: 'image/png' }), value.slice(1));
      else form.append(name, value);
    const encoded = new Response(form);
    headers['content-type'] = encoded.headers.get('content-type')!;
    request.payload = Buffer.from(await encoded.arrayBuffer());
  }
  // Exactly as written: an admin route without the credential must fail here as it would there.
  return app.app.inject(request);
}

describe('the curl examples of the README and docs/', () => {
  it('are found on the pages (so the checks below see them)', () => {
    expect(examples.length).toBeGreaterThan(30);
    expect(new Set(examples.map((example) => example.where.split(':')[0])).size).toBeGreaterThan(6);
  });

  it('each names a route of docs/routes.md with a method it has', () => {
    const problems = examples
      .filter((example) => !routeOf(example, routes))
      .map((example) => `${example.where}: ${example.method} ${example.url.pathname} is no route of docs/routes.md (wrong path or method?)`);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('each sends a -d body as JSON that parses, and files only where the route takes multipart', () => {
    const problems: string[] = [];
    for (const example of examples) {
      if (example.data !== undefined) {
        try {
          JSON.parse(example.data);
        } catch (error) {
          problems.push(`${example.where}: the -d body is not JSON (${(error as Error).message})`);
        }
        if (!example.headers.some(([name, value]) => name === 'content-type' && value === 'application/json'))
          problems.push(`${example.where}: a -d body needs -H 'content-type: application/json' (curl sends a form otherwise, which Hearth refuses)`);
      }
      const route = routeOf(example, routes);
      const routeLine = route ? routesPage[route.line - 1]! : '';
      if (example.form.length > 0 && route && !routeLine.includes('multipart'))
        problems.push(`${example.where}: -F sends multipart, and docs/routes.md does not say ${route.method} ${route.path} takes it`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('each is accepted by the app as written: the route, the body, and the credential its family needs', async () => {
    const problems: string[] = [];
    for (const example of examples) {
      const response = await send(example);
      const answer = response.headers['content-type']?.toString().includes('json')
        ? (response.json() as { type?: string; error?: { code?: string; type?: string } | string })
        : undefined;
      const error = answer?.error;
      const code = typeof error === 'object' ? (error.code ?? (answer?.type === 'error' ? error.type : undefined)) : undefined;
      // Ollama's shape (/api) is the message alone: any error but an unknown model refuses the example's form.
      const refused = (code !== undefined && REFUSALS.has(code)) || (typeof error === 'string' && !/^model ".*" not found/.test(error));
      if (example.documentedStatus !== undefined) {
        if (response.statusCode !== example.documentedStatus)
          problems.push(`${example.where}: documented as ${example.documentedStatus}, answered ${response.statusCode} ${response.body.slice(0, 200)}`);
      } else if (refused)
        problems.push(
          `${example.where}: ${example.method} ${example.url.pathname} (family ${familyOf(example.url.pathname)}) was refused: ${response.statusCode} ${response.body.slice(0, 300)}`,
        );
    }
    expect(problems, problems.join('\n')).toEqual([]);
  }, 120_000);
});

describe("the README's test command", () => {
  it('is the command CI runs', () => {
    const quickStart = /## Quick start\n\n```sh\n([\s\S]*?)```/.exec(readPage('README.md'))?.[1] ?? '';
    const test = /^(npm test)\b/m.exec(quickStart)?.[1];
    expect(test, 'the Quick start block has a line starting with npm test').toBe('npm test');
    const ci = readFileSync(join(REPO_ROOT, '.ci', 'run'), 'utf8')
      .trim()
      .split('\n')
      .at(-1);
    expect(ci).toBe(test);
  });
});
