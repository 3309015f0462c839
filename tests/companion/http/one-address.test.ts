import { describe, expect, it } from 'vitest';
import { canonicalAppHost } from '../../../companion/src/access/hosts.js';
import { sharedApp } from '../../helpers/app.js';

/*
 * One address for the app: conversations and the sign-in are kept per origin, so a page opened
 * through localhost moves to the address Hearth prints (127.0.0.1). API clients that use
 * localhost are answered where they asked.
 */

const hearth = sharedApp({ withModel: false });
const navigate = { 'sec-fetch-mode': 'navigate', accept: 'text/html' };

describe('the app at one address', () => {
  it('a page opened through localhost is sent to 127.0.0.1 on the same port, path and query kept', async () => {
    const response = await hearth.app.inject({ method: 'GET', url: '/chat?c=1', headers: { ...navigate, host: 'localhost:4777' } });
    expect(response.statusCode).toBe(307);
    expect(response.headers.location).toBe('http://127.0.0.1:4777/chat?c=1');
    const root = await hearth.app.inject({ method: 'GET', url: '/', headers: { ...navigate, host: 'app.localhost:4777' } });
    expect(root.headers.location).toBe('http://127.0.0.1:4777/');
  });

  it("the printed address, API calls and the app's own fetches through localhost are answered as they are", async () => {
    const printed = await hearth.app.inject({ method: 'GET', url: '/chat', headers: { ...navigate, host: '127.0.0.1:4777' } });
    expect(printed.statusCode).not.toBe(307);
    const api = await hearth.app.inject({ method: 'GET', url: '/v1/models', headers: { ...navigate, host: 'localhost:4777' } });
    expect(api.statusCode).toBe(200);
    const fetched = await hearth.app.inject({ method: 'GET', url: '/chat', headers: { host: 'localhost:4777', 'sec-fetch-mode': 'cors' } });
    expect(fetched.statusCode).not.toBe(307);
    const posted = await hearth.app.inject({ method: 'POST', url: '/chat', headers: { ...navigate, host: 'localhost:4777' } });
    expect(posted.statusCode).not.toBe(307);
  });

  it('names the address the listener can be reached at', () => {
    expect(canonicalAppHost('localhost:4777', '127.0.0.1')).toBe('127.0.0.1:4777');
    expect(canonicalAppHost('localhost:4777', '0.0.0.0')).toBe('127.0.0.1:4777');
    expect(canonicalAppHost('LOCALHOST:4777', '::')).toBe('127.0.0.1:4777');
    expect(canonicalAppHost('localhost:4777', '::1')).toBe('[::1]:4777');
    // Listening on a LAN address only: 127.0.0.1 would not answer.
    expect(canonicalAppHost('localhost:4777', '192.168.1.5')).toBeUndefined();
    expect(canonicalAppHost('127.0.0.1:4777', '127.0.0.1')).toBeUndefined();
    expect(canonicalAppHost('hearth.example:4777', '0.0.0.0')).toBeUndefined();
  });
});
