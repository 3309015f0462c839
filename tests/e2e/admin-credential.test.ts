import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithoutAdmin } from '../helpers/admin-fetch.js';
import { runHearth } from '../helpers/hearth-cli.js';
import { keyRequiredDataDir, newDataDir, startServer, type RunningServer } from '../helpers/server.js';

/*
 * The local admin credential on a real `hearth serve`: another local process (plain fetch, no
 * credential) is refused; the CLI reads `<data-dir>/admin-token`; the app signs in through a
 * one-time link from `hearth open` (a start without a terminal prints none).
 */

let server: RunningServer;
let token: string;

beforeAll(async () => {
  const dataDir = await keyRequiredDataDir();
  server = await startServer({ dataDir, withModel: false });
  token = readFileSync(join(dataDir, 'admin-token'), 'utf8').trim();
});

afterAll(async () => {
  await server?.stop();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetchWithoutAdmin(`${server.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('the admin credential', () => {
  it('is created on first start: admin-token 0600 in a 0700 data folder', () => {
    expect(token).toMatch(/^hadm_[A-Za-z0-9_-]{43}$/);
    expect(statSync(join(server.dataDir, 'admin-token')).mode & 0o777).toBe(0o600);
    expect(statSync(server.dataDir).mode & 0o777).toBe(0o700);
  });

  it('is required: another local process gets 401 on POST /admin/keys, even with auth on', async () => {
    const refused = await post('/admin/keys', { label: 'x' });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('admin_credential_required');
    const allowed = await post('/admin/keys', { label: 'owner' }, { authorization: `Bearer ${token}` });
    expect(allowed.status).toBe(201);
  });

  it('is read by the CLI: hearth config and hearth mcp work without being told it', async () => {
    const exported = await runHearth(['config', 'export', '--data-dir', server.dataDir]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(exported.stdout).toContain('version: 1');
    expect(exported.stdout).not.toContain(token);
    const status = await runHearth(['mcp', 'status', '--data-dir', server.dataDir]);
    expect(status.code, status.stderr).toBe(0);
  });

  it('stays out of stdout (one line, the address) and out of the log', () => {
    expect(server.stdout()).toBe(`Hearth listening on ${server.url}\n`);
    expect(server.stderr()).not.toContain(token);
  });
});

describe('signing the app in', () => {
  const codeOf = (link: string) => link.split('#')[1]!;

  it('started without a terminal, the start prints the command that makes a link, never a live link (a log file would hand it to its readers)', async () => {
    // Written just after listening: it may not be there yet when this test runs first.
    await expect
      .poll(() => server.stderr())
      .toContain(`To sign the app in, run npm run hearth -- open --data-dir ${server.dataDir} on this machine and open the link it prints.`);
    expect(server.stderr()).not.toMatch(/sign-in#/);
  });

  it('a link from `hearth open` gives the app a session: the cookie and the proof together open the admin routes, neither alone', async () => {
    const opened = await runHearth(['open', '--data-dir', server.dataDir]);
    expect(opened.code, opened.stderr).toBe(0);
    const signed = await post('/admin/session', { code: codeOf(opened.stdout.trim()) }, { origin: server.url });
    expect(signed.status).toBe(200);
    const { proof } = (await signed.json()) as { proof: string };
    const cookie = signed.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    const pair = cookie.split(';')[0]!;
    const status = (headers: Record<string, string>) => fetchWithoutAdmin(`${server.url}/admin/status`, { headers });
    expect((await status({ cookie: pair, 'x-hearth-session': proof })).status).toBe(200);
    expect((await status({ cookie: pair })).status).toBe(401);
    expect((await status({ 'x-hearth-session': proof })).status).toBe(401);
    // Signing out ends it for good: the same cookie and proof, sent again, are refused.
    const out = await fetchWithoutAdmin(`${server.url}/admin/session`, { method: 'DELETE', headers: { cookie: pair, 'x-hearth-session': proof } });
    expect(out.status).toBe(204);
    expect((await status({ cookie: pair, 'x-hearth-session': proof })).status).toBe(401);
  });

  it('`hearth open` prints a fresh link; it says what is wrong when no server runs', async () => {
    const opened = await runHearth(['open', '--data-dir', server.dataDir]);
    expect(opened.code, opened.stderr).toBe(0);
    const link = opened.stdout.trim();
    expect(link).toMatch(new RegExp(`^${server.url}/sign-in#[A-Za-z0-9_-]{43}$`));
    expect((await post('/admin/session', { code: codeOf(link) })).status).toBe(200);

    const idle = await runHearth(['open', '--data-dir', await newDataDir(false)]);
    expect(idle.code).toBe(1);
    expect(idle.stderr).toMatch(/No Hearth server is running/);
  });
});
