import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../helpers/app.js';

let app: TestApp;

beforeAll(async () => {
  app = await testApp({ withModel: false });
});

afterAll(async () => {
  await app?.close();
});

describe('GET /admin/session', () => {
  it('says whether the request carries the admin credential, without needing it, from loopback only', async () => {
    const anonymous = await app.injectWithoutAdmin({ method: 'GET', url: '/admin/session' });
    expect(anonymous.statusCode).toBe(200);
    expect(anonymous.json()).toEqual({ signed_in: false });
    expect(anonymous.headers['cache-control']).toBe('no-store');
    expect((await app.app.inject({ method: 'GET', url: '/admin/session' })).json()).toEqual({ signed_in: true });
    const wrong = await app.injectWithoutAdmin({ method: 'GET', url: '/admin/session', headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.json()).toEqual({ signed_in: false });
    const { code } = app.services.admin.issueLink();
    const signed = await app.injectWithoutAdmin({ method: 'POST', url: '/admin/session', payload: { code } });
    const cookies = ([] as string[]).concat(signed.headers['set-cookie'] as string | string[]);
    expect(cookies.map((cookie) => /Path=([^;]+)/.exec(cookie)?.[1])).toEqual(['/admin', '/agents/approvals']);
    const cookie = cookies[0]!.split(';')[0]!;
    expect((await app.injectWithoutAdmin({ method: 'GET', url: '/admin/session', headers: { cookie } })).json()).toEqual({ signed_in: true });
    // The same cookie opens the approvals inbox, which is guarded like the admin routes.
    expect((await app.injectWithoutAdmin({ method: 'GET', url: '/agents/approvals', headers: { cookie } })).statusCode).toBe(200);
    expect((await app.injectWithoutAdmin({ method: 'GET', url: '/admin/session', remoteAddress: '192.168.1.9' })).statusCode).toBe(403);
  });
});
