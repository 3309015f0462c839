import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionStore } from '$lib/stores/session.svelte';
import type { SessionState } from '#shared/api/admin.js';
import { respond } from './fetch-stub.js';

/* The app's sign-in state comes from the companion (GET /admin/session, never a 401), with the commands spelled as they run there. */

const state = (signedIn: boolean, extra: Partial<SessionState> = {}): SessionState => ({
  signed_in: signedIn,
  sign_in_command: 'npm run hearth -- open',
  key_command: 'npm run hearth -- keys create --label browser',
  start_command: 'npm start',
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
    const fetch = respond(() => Response.json(state(false)));
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
    respond(() => Response.json(state(true, { sign_in_command: 'hearth open', start_command: 'hearth', folder: undefined })));
    const store = new SessionStore();
    await store.check();
    expect(store.signedIn).toBe(true);
    expect(store.howToSignIn).toMatch(/^To sign in, run hearth open on the machine Hearth runs on/);
    expect(store.startAdvice).toBe('run hearth');
  });

  it('signs out through the companion, which ends the session cookie', async () => {
    const fetch = respond((path, init) => (init.method === 'DELETE' ? new Response(null, { status: 204 }) : Response.json(state(true))));
    const store = new SessionStore();
    await store.check();
    expect(store.signedIn).toBe(true);
    await store.signOut();
    expect(fetch.mock.calls.at(-1)).toEqual(['/admin/session', expect.objectContaining({ method: 'DELETE' })]);
    expect(store.signedIn).toBe(false);
    expect(new SessionStore().signedIn).toBe(false);
  });

  it('keeps its note while the companion cannot be asked', async () => {
    respond(() => Response.json(state(true)));
    const store = new SessionStore();
    await store.check();
    respond(() => {
      throw new TypeError('Failed to fetch');
    });
    await store.check();
    expect(store.signedIn).toBe(true);
  });
});
