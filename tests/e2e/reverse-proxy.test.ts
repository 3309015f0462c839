import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runHearth } from '../helpers/hearth-cli.js';
import { startReverseProxy, type ReverseProxy } from '../helpers/reverse-proxy.js';
import { keyRequiredDataDir, startServer, type RunningServer } from '../helpers/server.js';

/*
 * Hearth behind a real reverse proxy on loopback. The proxy connects from 127.0.0.1 and sends a
 * loopback Host and no Origin, exactly like a local client; only its forwarding header tells
 * the two apart. A request that passed through a proxy comes from somewhere else.
 */

async function json(response: Response): Promise<{ error?: { code: string; message: string } } & Record<string, unknown>> {
  return (await response.json()) as { error?: { code: string; message: string } };
}

describe('behind a reverse proxy (auth required)', () => {
  let server: RunningServer;
  let proxy: ReverseProxy;
  let key: string;

  beforeAll(async () => {
    const dataDir = await keyRequiredDataDir();
    const created = await runHearth(['keys', 'create', '--label', 'phone', '--data-dir', dataDir]);
    expect(created.code, created.stderr).toBe(0);
    key = created.stdout.trim();
    server = await startServer({ dataDir, withModel: false });
    proxy = await startReverseProxy(server.url);
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  it('a remote client cannot create keys through the proxy', async () => {
    const response = await fetch(`${proxy.url}/admin/keys`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ label: 'pwn' }),
    });
    expect(response.status).toBe(403);
    expect((await json(response)).error?.code).toBe('permission_denied');
    const listed = await runHearth(['keys', 'list', '--data-dir', server.dataDir]);
    expect(listed.stdout).not.toContain('pwn');
  });

  it('a remote client cannot add a stdio service (run a command) through the proxy', async () => {
    const marker = join(server.dataDir, 'pwned.txt');
    const response = await fetch(`${proxy.url}/admin/config/apply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        document: { version: 1, mcp_services: [{ name: 'pwn', transport: 'stdio', command: 'sh', args: ['-c', `id > ${marker}`] }] },
        confirm_high_risk: true,
      }),
    });
    expect(response.status).toBe(403);
    // The same change made locally runs its command: once that one has run, the refused one had its chance too.
    const probe = join(server.dataDir, 'probe.txt');
    const local = await fetch(`${server.url}/admin/config/apply`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        document: {
          version: 1,
          server: { auth: { required: true } },
          mcp_services: [{ name: 'probe', transport: 'stdio', command: 'sh', args: ['-c', `id > ${probe}`] }],
        },
        confirm_high_risk: true,
      }),
    });
    expect(local.status, await local.text()).toBe(200);
    await expect.poll(() => existsSync(probe)).toBe(true);
    expect(existsSync(marker)).toBe(false);
  });

  it('every admin route refuses proxied requests, whatever forwarding header the proxy adds', async () => {
    for (const header of [
      { forwarded: 'for=203.0.113.50;proto=https' },
      { 'x-forwarded-host': 'hearth.example.org' },
      { 'x-forwarded-proto': 'https' },
      { 'x-real-ip': '203.0.113.50' },
      { via: '1.1 proxy.example.org' },
    ]) {
      const other = await startReverseProxy(server.url, header);
      try {
        const response = await fetch(`${other.url}/admin/status`);
        expect(response.status, JSON.stringify(header)).toBe(403);
      } finally {
        await other.close();
      }
    }
  });

  it('the API still works through the proxy with a key, and not without one', async () => {
    expect((await fetch(`${proxy.url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${proxy.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
  });
});

describe('behind a reverse proxy with auth off (the loopback default)', () => {
  let server: RunningServer;
  let proxy: ReverseProxy;

  beforeAll(async () => {
    server = await startServer({ withModel: false });
    proxy = await startReverseProxy(server.url);
  });

  afterAll(async () => {
    await proxy?.close();
    await server?.stop();
  });

  it('the API is not keyless for proxied clients: they need a key, local clients do not', async () => {
    const proxied = await fetch(`${proxy.url}/v1/models`);
    expect(proxied.status).toBe(401);
    expect((await json(proxied)).error?.message).toMatch(/proxy/i);
    const chat = await fetch(`${proxy.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-anything' },
      body: JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(401);
    expect((await fetch(`${server.url}/v1/models`)).status).toBe(200);
    // The app's own files and /health stay public.
    expect((await fetch(`${proxy.url}/health`)).status).toBe(200);
  });
});
