import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionStore } from '$lib/stores/session.svelte';
import type { SessionState } from '#shared/api/admin.js';
import { stubFetch } from '../helpers/fetch-stub.js';

/* The app's sign-in state comes from the companion (GET /admin/session, never a 401), with the commands spelled as they run there. */

const state = (signedIn: boolean, extra: Partial<SessionState> = {}): SessionState => ({
  signed_in: signedIn,
  sign_in_command: 'npm run hearth -- open',
  key_command: 'npm run hearth -- keys create --label browser',
  start_command: 'npm start',
  in_folder: true,
  test_model_command: 'npm run model:tiny',
  folder: '/home/me/hearth',
  scripts_folder: '/home/me/hearth',
  models_dir: '/home/me/.hearth/models',
  external_models: true,
  ...extra,
});

beforeEach(() => localStorage.clear());
afterEach(() => vi.unstubAllGlobals());

describe('the session store', () => {
  it('takes the sign-in state and the commands from the companion, and says how to sign in', async () => {
    const fetch = stubFetch(() => Response.json(state(false)));
    const store = new SessionStore();
    await store.check();
    expect(fetch.mock.calls.map(([path]) => String(path))).toEqual(['/admin/session']);
    expect(store.signedIn).toBe(false);
    expect(store.checked).toBe(true);
    expect(store.howToSignIn).toBe(
      'To sign in, run npm run hearth -- open in the Hearth folder (/home/me/hearth) on the machine Hearth runs on, and open the link it prints in this browser. Restarting Hearth also opens a signed-in window.',
    );
    expect(store.startAdvice).toBe('run npm start in the Hearth folder (/home/me/hearth)');
    // Remembered for when the companion cannot be asked (the unreachable banner).
    expect(new SessionStore().startAdvice).toBe('run npm start in the Hearth folder (/home/me/hearth)');
  });

  it('an installed hearth needs no folder', async () => {
    stubFetch(() => Response.json(state(true, { sign_in_command: 'hearth open', start_command: 'hearth', in_folder: false, folder: undefined })));
    const store = new SessionStore();
    await store.check();
    expect(store.signedIn).toBe(true);
    expect(store.howToSignIn).toMatch(/^To sign in, run hearth open on the machine Hearth runs on/);
    expect(store.startAdvice).toBe('run hearth');
  });

  it('signs out through the companion, which ends the session cookie', async () => {
    const fetch = stubFetch((path, init) => (init.method === 'DELETE' ? new Response(null, { status: 204 }) : Response.json(state(true))));
    const store = new SessionStore();
    await store.check();
    expect(store.signedIn).toBe(true);
    await store.signOut();
    expect(fetch.mock.calls.at(-1)).toEqual(['/admin/session', expect.objectContaining({ method: 'DELETE' })]);
    expect(store.signedIn).toBe(false);
    expect(new SessionStore().signedIn).toBe(false);
  });

  it('signed out, the companion gives no folders: the advice still says the command runs in the Hearth folder', async () => {
    stubFetch(() =>
      Response.json({
        signed_in: false,
        sign_in_command: 'npm run hearth -- open',
        key_command: 'k',
        start_command: 'npm start',
        in_folder: true,
        external_models: true,
      }),
    );
    const store = new SessionStore();
    await store.check();
    expect(store.howToSignIn).toMatch(/^To sign in, run npm run hearth -- open in the Hearth folder on the machine Hearth runs on/);
    expect(store.startAdvice).toBe('run npm start in the Hearth folder');
  });

  it("keeps the proof it got at sign-in in this origin's storage and sends it with admin requests only", async () => {
    const fetch = stubFetch((path, init) => {
      if (path === '/admin/session' && init.method === 'POST') return Response.json({ proof: 'hses_proof', expires_at: '2027-01-01T00:00:00Z' });
      return Response.json(state(true));
    });
    const store = new SessionStore();
    await store.signIn('code');
    expect(store.signedIn).toBe(true);
    expect(localStorage.getItem('hearth.admin-proof')).toBe('hses_proof');
    await store.check();
    const sent = (index: number) => new Headers(fetch.mock.calls[index]![1]!.headers).get('x-hearth-session');
    expect(sent(1)).toBe('hses_proof');
    // Never to a key-scoped route or another origin.
    const { send } = await import('$lib/api/client');
    await send('/v1/models');
    await send('//elsewhere.example/admin/status');
    expect(sent(2)).toBeNull();
    expect(sent(3)).toBeNull();
  });

  it('signs every browser out through the companion, and forgets the proof', async () => {
    localStorage.setItem('hearth.admin-proof', 'hses_proof');
    const fetch = stubFetch((path, init) => (init.method === 'DELETE' ? Response.json({ ended: 3 }) : Response.json(state(true))));
    const store = new SessionStore();
    await store.check();
    await store.signOutEverywhere();
    expect(fetch.mock.calls.at(-1)).toEqual(['/admin/sessions', expect.objectContaining({ method: 'DELETE' })]);
    expect(store.signedIn).toBe(false);
    expect(localStorage.getItem('hearth.admin-proof')).toBeNull();
  });

  it('an answer asked before a sign-in finished does not undo it (the page asks at once while the sign-in page redeems its code)', async () => {
    let answer!: () => void;
    stubFetch((path, init) => {
      if (init.method === 'POST') return Response.json({ proof: 'hses_new', expires_at: '2027-01-01T00:00:00Z' });
      return new Promise<Response>((resolve) => (answer = () => resolve(Response.json(state(false)))));
    });
    const store = new SessionStore();
    const asked = store.check();
    await store.signIn('code');
    answer();
    await asked;
    expect(store.signedIn).toBe(true);
    expect(localStorage.getItem('hearth.admin-proof')).toBe('hses_new');
  });

  it('forgets the proof when the companion knows no session for it', async () => {
    localStorage.setItem('hearth.admin-proof', 'hses_stale');
    stubFetch(() => Response.json(state(false)));
    await new SessionStore().check();
    expect(localStorage.getItem('hearth.admin-proof')).toBeNull();
  });

  it('keeps its note while the companion cannot be asked', async () => {
    stubFetch(() => Response.json(state(true)));
    const store = new SessionStore();
    await store.check();
    stubFetch(() => {
      throw new TypeError('Failed to fetch');
    });
    await store.check();
    expect(store.signedIn).toBe(true);
  });
});
