import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { sharedApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * Pages and API paths are told apart by the one route table. /memory is the app's Memory screen
 * and the memory routes live below /memory/: with keys required, the screen must load without a
 * key (it was answered 401 while the perimeter counted /memory itself as a memory route), while
 * every memory route still needs one. A small stand-in for build/web keeps this independent of
 * the web build.
 */

const hearth = sharedApp({
  prepare: async () => {
    const webRoot = mkdtempSync(join(tmpdir(), 'hearth-web-'));
    for (const name of ['index.html', '200.html', 'memory.html', 'models.html'])
      writeFileSync(join(webRoot, name), `<!doctype html><html><head><title>${name}</title></head><body></body></html>`);
    const dataDir = await newDataDir(false);
    writeFileSync(join(dataDir, 'config.yaml'), stringify({ version: 1, server: { auth: { required: true } } }));
    return { dataDir, webRoot };
  },
});

describe('pages and API paths with keys required', () => {
  it('serves the Memory and Models screens without a key', async () => {
    for (const [url, shell] of [
      ['/memory', 'memory.html'],
      ['/memory?agent=helper', 'memory.html'],
      ['/models', 'models.html'],
    ]) {
      const response = await hearth.app.inject({ method: 'GET', url });
      expect([url, response.statusCode, response.headers['content-type']]).toEqual([url, 200, 'text/html; charset=utf-8']);
      expect(response.body, url).toContain(`<title>${shell}</title>`);
    }
  });

  it('still asks a key of every route below /memory/, and of other API families', async () => {
    for (const url of ['/memory/agents', '/memory/agents/helper/facts', '/v1/models', '/agents', '/mcp/tools']) {
      const response = await hearth.app.inject({ method: 'GET', url });
      expect([url, response.statusCode, response.json().error.code]).toEqual([url, 401, 'invalid_api_key']);
    }
  });

  it('answers an unknown path in an API family in JSON, never with a page', async () => {
    for (const url of ['/memory/nope', '/v1/nope', '/health/nope']) {
      const response = await hearth.app.inject({ method: 'GET', url, headers: url.startsWith('/health') ? {} : { authorization: 'Bearer hth_unknown' } });
      expect(response.headers['content-type'], url).toMatch(/^application\/json/);
    }
  });
});
