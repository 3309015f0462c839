import { describe, expect, it } from 'vitest';
import { sharedApp } from '../../helpers/app.js';

const app = sharedApp({ withModel: false });

describe("the app's admin session and the approvals", () => {
  it('signing in sets the session cookie for /admin and for /agents/approvals, and the cookie with the proof opens the inbox', async () => {
    const { code } = app.services.admin.issueLink();
    const signed = await app.app.inject({ method: 'POST', url: '/admin/session', payload: { code } });
    expect(signed.statusCode).toBe(200);
    const proof = (signed.json() as { proof: string }).proof;
    const cookies = ([] as string[]).concat(signed.headers['set-cookie'] as string | string[]);
    expect(cookies.map((cookie) => /Path=([^;]+)/.exec(cookie)?.[1])).toEqual(['/admin', '/agents/approvals']);
    for (const cookie of cookies) expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
    const cookie = cookies[1]!.split(';')[0]!;
    const headers = { cookie, 'x-hearth-session': proof };
    expect((await app.app.inject({ method: 'GET', url: '/agents/approvals', headers })).json()).toEqual({ object: 'list', data: [] });
    expect((await app.app.inject({ method: 'GET', url: '/agents/approvals' })).statusCode).toBe(401);
    expect((await app.app.inject({ method: 'GET', url: '/agents/approvals', headers: { cookie } })).statusCode).toBe(401);
    expect((await app.app.inject({ method: 'GET', url: '/agents/approvals', headers: { ...headers, cookie: `${cookie}x` } })).statusCode).toBe(401);
    // Signing out clears both.
    const out = await app.app.inject({ method: 'DELETE', url: '/admin/session', headers });
    const cleared = ([] as string[]).concat(out.headers['set-cookie'] as string | string[]);
    expect(cleared.map((entry) => /Path=([^;]+).*Max-Age=0/.exec(entry)?.[1])).toEqual(['/admin', '/agents/approvals']);
  });
});
