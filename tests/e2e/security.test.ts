import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { AccessKeyRecord, CreatedKey } from '#shared/api/access.js';
import { DEFAULT_DOCUMENT_TEXT, loadConfigFile } from '../../companion/src/config/document.js';
import { runHearth, rawRequest } from '../helpers/hearth-cli.js';
import { mockProviderForTest, startMockProvider, type MockProvider } from '../helpers/mock-provider.js';
import { keyRequiredDataDir, newDataDir, send, sharedServer, startServer, type RunningServer } from '../helpers/server.js';

/*
 * The security perimeter on real `hearth serve` processes, all on 127.0.0.1. Every request
 * goes to loopback; the one server started with --host 0.0.0.0 gets no request beyond it.
 */

const running: RunningServer[] = [];

afterEach(async () => {
  await Promise.all(running.splice(0).map((server) => server.stop('SIGKILL')));
});

async function start(options: Parameters<typeof startServer>[0] = {}): Promise<RunningServer> {
  const server = await startServer({ withModel: false, ...options });
  running.push(server);
  return server;
}

/** Stops a server started with start() and waits for its exit code. */
async function stop(server: RunningServer): Promise<number | null> {
  running.splice(running.indexOf(server), 1);
  return server.stop();
}

function writeConfig(dataDir: string, text: string): void {
  writeFileSync(join(dataDir, 'config.yaml'), text);
}

async function errorCode(response: Response): Promise<string> {
  return ((await response.json()) as { error: { code: string } }).error.code;
}

async function createKey(server: RunningServer, body: Record<string, unknown>): Promise<CreatedKey> {
  const response = await send(server, '/admin/keys', { body });
  expect(response.status).toBe(201);
  return (await response.json()) as CreatedKey;
}

const cli = (dataDir: string, ...args: string[]) => runHearth([...args, '--data-dir', dataDir]);

/**
 * One server that requires a key (and allows one web page by CORS, for the admin checks), for the
 * tests that each use keys of their own on it: one start instead of one per test; stopped after
 * the last, it must exit 0. Their failed authentications add up (three in all, under the five
 * that slow an address down); the test of that slowing down has a server of its own.
 */
const keyed = sharedServer({
  withModel: false,
  prepare: async () => ({ dataDir: await keyRequiredDataDir({ serverYaml: '  cors:\n    origins: ["http://app.example"]\n' }) }),
});

describe('access keys on a running server (auth required)', () => {
  it('go through their whole life over HTTP: create, use, scope checks, list, revoke with immediate effect', async () => {
    const { server } = keyed;

    expect(await errorCode(await send(server, '/v1/models'))).toBe('invalid_api_key');
    expect((await send(server, '/v1/models')).status).toBe(401);
    expect((await send(server, '/v1/models', { key: 'sk-some-openai-key' })).status).toBe(401);
    expect((await send(server, '/health')).status).toBe(200);

    const inference = await createKey(server, { label: 'editor', scopes: ['inference'] });
    expect((await send(server, '/v1/models', { key: inference.key })).status).toBe(200);
    const outOfScope = await send(server, '/agents', { key: inference.key });
    expect(outOfScope.status).toBe(403);
    expect(await errorCode(outOfScope)).toBe('permission_denied');

    const agentKey = await createKey(server, { label: 'helper only', agent: 'helper' });
    expect((await send(server, '/v1/models', { key: agentKey.key, headers: { 'x-service-agent-id': 'helper' } })).status).toBe(200);
    const otherAgentHeader = await send(server, '/v1/models', { key: agentKey.key, headers: { 'x-service-agent-id': 'other' } });
    expect(otherAgentHeader.status).toBe(403);
    expect(await errorCode(otherAgentHeader)).toBe('permission_denied');
    const otherAgentPath = await send(server, '/agents/other/run', { key: agentKey.key, body: {} });
    expect(otherAgentPath.status).toBe(403);

    const listed = (await (await send(server, '/admin/keys')).json()) as { data: AccessKeyRecord[] };
    expect(listed.data.map((key) => key.id)).toEqual(expect.arrayContaining([inference.id, agentKey.id]));
    expect(listed.data.find((key) => key.id === inference.id)!.last_used_at).not.toBeNull();
    expect(JSON.stringify(listed)).not.toContain(inference.key);

    const revoked = await send(server, `/admin/keys/${inference.id}`, { method: 'DELETE' });
    expect(revoked.status).toBe(200);
    // The very next request is refused: no cache, no grace period.
    const after = await send(server, '/v1/models', { key: inference.key });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error: { message: string } }).error.message).toMatch(/revoked/);
    expect((await send(server, '/v1/models', { key: agentKey.key })).status).toBe(200);
  });

  it('keys made and revoked with the CLI while the server runs take effect at once', async () => {
    const { server } = keyed;
    const { dataDir } = server;

    const created = await cli(dataDir, 'keys', 'create', '--label', 'from the cli', '--scope', 'inference');
    expect(created.code, created.stderr).toBe(0);
    const key = created.stdout.trim();
    expect((await send(server, '/v1/models', { key })).status).toBe(200);
    expect((await send(server, '/mcp/tools', { key })).status).toBe(403);

    const id = ((await (await send(server, '/admin/keys')).json()) as { data: AccessKeyRecord[] }).data.find((entry) => entry.label === 'from the cli')!.id;
    const listed = await cli(dataDir, 'keys', 'list');
    expect(listed.stdout).toContain(id);
    // Its line (the server also holds the other tests' keys) shows it used.
    expect(listed.stdout.split('\n').find((line) => line.startsWith(id))).not.toMatch(/last-used=never/);

    const revoked = await cli(dataDir, 'keys', 'revoke', id);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect((await send(server, '/v1/models', { key })).status).toBe(401);
  });

  it('admin routes refuse a valid key sent with a forged forwarding header, a foreign Host or a foreign Origin', async () => {
    const { server } = keyed;
    const { dataDir } = server;
    const { key } = await createKey(server, { label: 'admin attempt' });
    const port = new URL(server.url).port;
    const foreignHost = await rawRequest(Number(port), 'GET /admin/keys HTTP/1.1', {
      host: `evil.example:${port}`,
      authorization: `Bearer ${key}`,
      'x-forwarded-for': '127.0.0.1',
    });
    expect(foreignHost.status).toBe(403);
    expect(foreignHost.body).toContain('host_not_allowed');
    const foreignOrigin = await send(server, '/admin/config/apply', {
      key,
      headers: { origin: 'http://evil.example' },
      body: { document: { version: 1, server: { auth: { required: false } } }, confirm_high_risk: true },
    });
    expect(foreignOrigin.status).toBe(403);
    expect(await errorCode(foreignOrigin)).toBe('origin_not_allowed');
    expect(parse(readFileSync(join(dataDir, 'config.yaml'), 'utf8'))).toMatchObject({ server: { auth: { required: true } } });
  });

  it('slows down repeated failures from one address: 429 with Retry-After', async () => {
    const dataDir = await keyRequiredDataDir();
    const server = await start({ dataDir });
    for (let attempt = 0; attempt < 5; attempt++) expect((await send(server, '/v1/models', { key: `hth_wrong${attempt}` })).status).toBe(401);
    const limited = await send(server, '/v1/models', { key: 'hth_wrong5' });
    expect(limited.status).toBe(429);
    expect(await errorCode(limited)).toBe('rate_limit_exceeded');
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
  });
});

describe('request targets the router rewrites (auth required)', () => {
  let port: number;
  let host: string;

  beforeAll(() => {
    port = Number(new URL(keyed.server.url).port);
    host = `127.0.0.1:${port}`;
  });

  it('a percent-escaped path still needs a key (/%761/models is served as /v1/models)', async () => {
    const escaped = await rawRequest(port, 'GET /%761/models HTTP/1.1', { host });
    expect(escaped.status, escaped.body.slice(0, 200)).toBe(401);
  });

  it('an absolute-form request target still needs a key', async () => {
    const absolute = await rawRequest(port, `GET http://${host}/v1/models HTTP/1.1`, { host });
    expect(absolute.status, absolute.body.slice(0, 200)).toBe(401);
  });

  it('an absolute-form request target to an admin route still gets the admin checks', async () => {
    // Admin routes refuse every foreign Origin, even one configured for CORS. The same rule must
    // hold whatever the form of the request target: a path the perimeter misreads as public
    // would also skip the loopback-peer check on a server listening beyond loopback.
    const plain = await rawRequest(port, 'GET /admin/keys HTTP/1.1', { host, origin: 'http://app.example' });
    expect(plain.status).toBe(403);
    expect(plain.body).toContain('origin_not_allowed');
    const absolute = await rawRequest(port, `GET http://${host}/admin/keys HTTP/1.1`, { host, origin: 'http://app.example' });
    expect(absolute.status, absolute.body.slice(0, 200)).toBe(403);
  });
});

describe('per-key cap on concurrent requests (server.limits.streams_per_key)', () => {
  it('refuses a second request of the same key with 429 while a stream is open, and frees the slot when it ends', async () => {
    const dataDir = await newDataDir(true);
    writeConfig(dataDir, 'version: 1\nserver:\n  limits:\n    streams_per_key: 1\n');
    const server = await start({ dataDir, withModel: true });
    const first = await createKey(server, { label: 'streamer' });
    const second = await createKey(server, { label: 'bystander' });

    const controller = new AbortController();
    const stream = await fetch(`${server.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${first.key}` },
      body: JSON.stringify({ model: 'tiny', stream: true, max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Go on forever' }] }),
      signal: controller.signal,
    });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let seen = '';
    while (!seen.includes('"content":"')) seen += new TextDecoder().decode((await reader.read()).value);

    try {
      const refused = await send(server, '/v1/chat/completions', {
        key: first.key,
        body: { model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'me too' }] },
      });
      expect(refused.status).toBe(429);
      expect(await errorCode(refused)).toBe('rate_limit_exceeded');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await send(server, '/v1/models', { key: first.key })).status).toBe(429);
      // The cap is per key: another key and keyless clients are not affected.
      expect((await send(server, '/v1/models', { key: second.key })).status).toBe(200);
      expect((await send(server, '/v1/models')).status).toBe(200);
    } finally {
      controller.abort();
    }
    await expect.poll(async () => (await send(server, '/v1/models', { key: first.key })).status, { timeout: 15_000, interval: 50 }).toBe(200);
  });
});

describe('secrets stay secret', () => {
  const SECRET = 'sk-e2e-9b1f00d5c3a24e7f8d6c5b4a39281706';
  let provider: MockProvider;

  beforeAll(async () => {
    provider = await startMockProvider({ token: SECRET, models: ['remote-small'] });
  });

  afterAll(async () => {
    await provider.close();
  });

  it('a secret set with `hearth secret set` is used but never shown: exports, status, CLI output, logs', async () => {
    const dataDir = await newDataDir(false);
    const set = await cli(dataDir, 'secret', 'set', 'REMOTE_KEY');
    expect(set.code).toBe(1); // nothing on stdin
    const stored = await runHearth(['secret', 'set', 'REMOTE_KEY', '--data-dir', dataDir], { stdin: `${SECRET}\n` });
    expect(stored.code, stored.stderr).toBe(0);
    expect(stored.stdout).toContain('secret:REMOTE_KEY');
    expect(stored.stdout + stored.stderr).not.toContain(SECRET);
    expect(statSync(join(dataDir, 'secrets.json')).mode & 0o777).toBe(0o600);
    writeConfig(dataDir, `version: 1\nproviders:\n  - name: remote\n    base_url: ${provider.baseUrl}\n    api_key: secret:REMOTE_KEY\n`);

    const server = await start({ dataDir, env: { HEARTH_LOG_LEVEL: 'debug' } });
    const { key } = await createKey(server, { label: 'reader' });
    // The secret is in use: the provider demands it and answers.
    const models = (await (await send(server, '/v1/models', { key })).json()) as { data: { id: string }[] };
    expect(models.data.map((model) => model.id)).toContain('remote/remote-small');
    const chat = await send(server, '/v1/chat/completions', {
      key,
      body: { model: 'remote/remote-small', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(chat.status).toBe(200);
    const streamed = await send(server, '/v1/chat/completions', {
      key,
      body: { model: 'remote/remote-small', stream: true, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    });
    const streamedText = await streamed.text();
    expect(provider.requests.some((request) => request.headers.authorization === `Bearer ${SECRET}`)).toBe(true);

    const outputs: Record<string, string> = {
      exportYaml: await (await send(server, '/admin/config/export?format=yaml')).text(),
      exportJson: await (await send(server, '/admin/config/export?format=json')).text(),
      status: await (await send(server, '/admin/status')).text(),
      keys: await (await send(server, '/admin/keys')).text(),
      streamed: streamedText,
      cliExportYaml: (await cli(dataDir, 'config', 'export')).stdout,
      cliExportJson: (await cli(dataDir, 'config', 'export', '--format', 'json')).stdout,
      cliSecretList: (await cli(dataDir, 'secret', 'list')).stdout,
      configFile: readFileSync(join(dataDir, 'config.yaml'), 'utf8'),
    };
    expect(outputs.cliExportYaml).toContain('secret:REMOTE_KEY');
    expect(JSON.parse(outputs.cliExportJson!)).toEqual(JSON.parse(outputs.exportJson!));
    expect(outputs.cliSecretList).toBe('REMOTE_KEY\n');
    expect(await stop(server)).toBe(0);
    outputs.stderr = server.stderr();
    outputs.stdout = server.stdout();
    expect(outputs.stderr.length).toBeGreaterThan(0); // debug logging did say things
    for (const [where, text] of Object.entries(outputs)) {
      expect(text.includes(SECRET), `${where} shows the secret`).toBe(false);
      expect(text.includes(SECRET.slice(3, 20)), `${where} shows part of the secret`).toBe(false);
      expect(text.includes(key), `${where} shows an access key`).toBe(false);
    }
  });

  it('a secret set while the server runs can be referenced by the next apply', async () => {
    const dataDir = await newDataDir(false);
    const server = await start({ dataDir });
    const stored = await runHearth(['secret', 'set', 'LATE_KEY', '--data-dir', dataDir], { stdin: SECRET });
    expect(stored.code, stored.stderr).toBe(0);
    const applied = await send(server, '/admin/config/apply', {
      body: { document: { version: 1, providers: [{ name: 'late', base_url: provider.baseUrl, api_key: 'secret:LATE_KEY' }] } },
    });
    expect(applied.status, await applied.clone().text()).toBe(200);
    const models = (await (await send(server, '/v1/models')).json()) as { data: { id: string }[] };
    expect(models.data.map((model) => model.id)).toContain('late/remote-small');
  });
});

describe('hearth config against a running server', () => {
  it('plan changes nothing; apply refuses high risk without --yes (exit 3), refuses invalid files whole (exit 1), applies live with --yes', async () => {
    const dataDir = await newDataDir(false);
    const server = await start({ dataDir });
    const configFile = join(dataDir, 'config.yaml');
    const exportNow = async () => (await send(server, '/admin/config/export?format=json')).text();
    const preflight = () =>
      send(server, '/v1/chat/completions', { method: 'OPTIONS', headers: { origin: 'http://app.example', 'access-control-request-method': 'POST' } });
    const change = join(dataDir, 'change.yaml');
    // memory.salienceFloor is the old spelling of memory.salience_floor: accepted, with a warning.
    writeFileSync(change, 'version: 1\nserver:\n  cors:\n    origins: ["http://app.example"]\nmodels:\n  parallel: 2\nmemory:\n  salienceFloor: 0.3\n');

    const fileBefore = readFileSync(configFile, 'utf8');
    const exportBefore = await exportNow();
    const planned = await cli(dataDir, 'config', 'plan', change);
    expect(planned.code, planned.stderr).toBe(0);
    expect(planned.stdout).toMatch(/update\s+server: cors\.origins/);
    expect(planned.stdout).toMatch(/update\s+models: parallel/);
    expect(planned.stdout).toMatch(/update\s+memory: salience_floor/);
    expect(planned.stderr).toContain('warning: memory.salienceFloor is now spelled memory.salience_floor');
    expect(planned.stdout).toMatch(/HIGH RISK cors_widened/);
    expect(planned.stdout).toMatch(/Nothing was changed/);
    expect(readFileSync(configFile, 'utf8')).toBe(fileBefore);
    expect(await exportNow()).toBe(exportBefore);
    expect((await preflight()).status).toBe(403);

    const unconfirmed = await cli(dataDir, 'config', 'apply', change);
    expect(unconfirmed.code).toBe(3);
    expect(unconfirmed.stderr).toMatch(/HIGH RISK cors_widened \(server\.cors\.origins\)/);
    expect(unconfirmed.stderr).toMatch(/--yes/);
    expect(readFileSync(configFile, 'utf8')).toBe(fileBefore);
    expect(await exportNow()).toBe(exportBefore);

    const invalid = join(dataDir, 'invalid.yaml');
    writeFileSync(
      invalid,
      'version: 1\nserver:\n  cors:\n    origins: ["http://app.example"]\n  port: high\nmodels:\n  parallel: 0\nproviders:\n  - name: p\n    base_url: http://127.0.0.1:9/v1\n    api_key: secret:NOPE\n',
    );
    const refused = await cli(dataDir, 'config', 'apply', invalid, '--yes');
    expect(refused.code).toBe(1);
    for (const path of ['server.port', 'models.parallel', 'providers[0].api_key']) expect(refused.stderr).toContain(`${path}:`);
    expect(refused.stderr).toMatch(/Not applied/);
    expect(readFileSync(configFile, 'utf8')).toBe(fileBefore);
    expect(await exportNow()).toBe(exportBefore);
    expect((await preflight()).status).toBe(403);

    const confirmed = await cli(dataDir, 'config', 'apply', change, '--yes');
    expect(confirmed.code, confirmed.stderr).toBe(0);
    expect(confirmed.stdout).toMatch(/Applied/);
    // In force at once, no restart.
    const allowed = await preflight();
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe('http://app.example');
    const onDisk = loadConfigFile(configFile);
    expect(onDisk.server.cors.origins).toEqual(['http://app.example']);
    expect(onDisk.models.parallel).toBe(2);
    expect(JSON.parse(await exportNow())).toEqual(onDisk);
    // The file was edited, not rewritten: its comments are still there.
    expect(readFileSync(configFile, 'utf8')).toContain(DEFAULT_DOCUMENT_TEXT.split('\n')[0]);
  });

  it('says so when no server is running', async () => {
    const dataDir = await newDataDir(false);
    const result = await cli(dataDir, 'config', 'export');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/No Hearth server is running/);
  });
});

describe('a restart', () => {
  it('keeps the applied configuration and the keys', async () => {
    const provider = await mockProviderForTest({ models: ['kept-model'] });
    const dataDir = await newDataDir(false);
    const first = await start({ dataDir });
    const { key } = await createKey(first, { label: 'survivor', scopes: ['inference'] });
    const revoked = await createKey(first, { label: 'gone' });
    expect((await send(first, `/admin/keys/${revoked.id}`, { method: 'DELETE' })).status).toBe(200);
    const applied = await send(first, '/admin/config/apply', {
      body: {
        document: {
          version: 1,
          server: { auth: { required: true }, cors: { origins: ['http://app.example'] } },
          providers: [{ name: 'kept', base_url: provider.baseUrl }],
        },
        confirm_high_risk: true,
      },
    });
    expect(applied.status).toBe(200);
    const exportBefore = await (await send(first, '/admin/config/export?format=json')).text();
    const keysBefore = ((await (await send(first, '/admin/keys')).json()) as { data: AccessKeyRecord[] }).data;
    expect(await stop(first)).toBe(0);
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);

    const second = await start({ dataDir });
    expect(await (await send(second, '/admin/config/export?format=json')).text()).toBe(exportBefore);
    const keysAfter = ((await (await send(second, '/admin/keys')).json()) as { data: AccessKeyRecord[] }).data;
    expect(keysAfter.map(({ last_used_at: _used, ...rest }) => rest)).toEqual(keysBefore.map(({ last_used_at: _used, ...rest }) => rest));
    expect((await send(second, '/v1/models')).status).toBe(401);
    const models = await send(second, '/v1/models', { key });
    expect(models.status).toBe(200);
    expect(((await models.json()) as { data: { id: string }[] }).data.map((model) => model.id)).toContain('kept/kept-model');
    expect((await send(second, '/v1/models', { key: revoked.key })).status).toBe(401);
    const preflight = await send(second, '/v1/models', {
      method: 'OPTIONS',
      headers: { origin: 'http://app.example', 'access-control-request-method': 'GET' },
    });
    expect(preflight.status).toBe(204);
  });
});

describe('listening beyond loopback', () => {
  const serveArgs = (dataDir: string) => ['serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', dataDir, '--no-external-models'];

  it('is refused while auth is off, with a message saying what to do', async () => {
    const dataDir = await newDataDir(false);
    const result = await runHearth(serveArgs(dataDir));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/Refusing to listen on 0\.0\.0\.0/);
    expect(result.stderr).toMatch(/server\.auth\.required: true/);
    expect(result.stderr).toMatch(/npm run hearth -- keys create/);
    expect(result.stdout).not.toMatch(/listening/);
    expect(existsSync(join(dataDir, 'server.json'))).toBe(false);
  });

  it('is refused while auth is required but no active key exists (none, or only revoked ones)', async () => {
    const dataDir = await keyRequiredDataDir();
    const none = await runHearth(serveArgs(dataDir));
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/none exists yet/);
    expect(none.stdout).not.toMatch(/listening/);

    const created = await cli(dataDir, 'keys', 'create', '--label', 'soon revoked');
    expect(created.code).toBe(0);
    const id = /Created (key_[0-9a-f]+)/.exec(created.stderr)![1]!;
    expect((await cli(dataDir, 'keys', 'revoke', id)).code).toBe(0);
    const onlyRevoked = await runHearth(serveArgs(dataDir));
    expect(onlyRevoked.code).toBe(1);
    expect(onlyRevoked.stderr).toMatch(/none exists yet/);
  });

  describe('when auth is required and a key exists', () => {
    // One start for both tests (no traffic beyond loopback); stopped after them, it must exit 0.
    const wide = sharedServer({
      withModel: false,
      args: ['--host', '0.0.0.0'],
      async prepare() {
        const dataDir = await keyRequiredDataDir();
        expect((await cli(dataDir, 'keys', 'create', '--label', 'remote laptop')).code).toBe(0);
        return { dataDir };
      },
    });

    it('starts, listening on 0.0.0.0', () => {
      expect(wide.server.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    });

    it('leaves a loopback URL in server.json, so `hearth config` can reach the admin routes', () => {
      const { url } = JSON.parse(readFileSync(join(wide.server.dataDir, 'server.json'), 'utf8')) as { url: string };
      // Admin routes refuse any Host that is not a loopback name, 0.0.0.0 included.
      expect(['127.0.0.1', 'localhost', '[::1]']).toContain(new URL(url).hostname);
    });
  });
});
