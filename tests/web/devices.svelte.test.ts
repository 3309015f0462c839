import { afterEach, describe, expect, it, vi } from 'vitest';
import { DevicesStore } from '$lib/stores/devices.svelte';
import { stubFetch } from '../helpers/fetch-stub.js';

/** A companion that answers the Devices screen's routes from `routes` (path -> body or handler). */
function companion(routes: Record<string, unknown | ((init: RequestInit) => unknown)>) {
  const calls: { path: string; method: string; body?: string }[] = [];
  stubFetch(async (path, init) => {
    calls.push({ path, method: init.method ?? 'GET', body: init.body as string | undefined });
    const route = routes[`${init.method ?? 'GET'} ${path}`];
    if (route === undefined)
      return Response.json({ error: { message: 'none', type: 'invalid_request_error', code: 'route_not_found', param: null } }, { status: 404 });
    const body = typeof route === 'function' ? (route as (init: RequestInit) => unknown)(init) : route;
    return body instanceof Response ? body : Response.json(body);
  });
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

const device = (id: string) => ({ id, name: id, agents: ['helper'], fingerprint: 'AA', created_at: '', last_seen_at: null, revoked_at: null, connections: 0 });
const workspace = (state: string) => ({
  name: 'acme',
  issuer: 'https://login.example.org',
  workspace_id: 'acme',
  grant: 'authorization_code',
  state,
  subject: null,
  expires_at: null,
  signed_in_at: null,
  message: null,
});

function base(devices: unknown[] = []) {
  return {
    'GET /admin/devices/channel': { enabled: true, listening: true, host: '0.0.0.0', port: 4778, url: 'https://10.0.0.2:4778', fingerprint: 'AB:CD' },
    'GET /admin/devices': () => ({ object: 'list', data: devices }),
    'GET /admin/remote-hosts': { object: 'list', data: [] },
    'GET /admin/cloud/workspaces': { object: 'list', data: [workspace('signed_out')] },
    'GET /agents': { object: 'list', data: [{ id: 'helper' }, { id: 'home/writer', source: 'remote' }] },
  };
}

describe('DevicesStore', () => {
  it('loads the channel, devices and the agents a pairing may grant (only local ones)', async () => {
    companion(base([device('dev_1')]));
    const store = new DevicesStore();
    await store.refresh();
    expect(store.channel?.url).toBe('https://10.0.0.2:4778');
    expect(store.devices.map((entry) => entry.id)).toEqual(['dev_1']);
    expect(store.agents).toEqual(['helper']);
    expect(store.error).toBeNull();
  });

  it('asks for a code granting the ticked agents, and notices the device that used it', async () => {
    const listed: unknown[] = [];
    const calls = companion({
      ...base(listed),
      'POST /admin/devices/pair': {
        code: 'ABCD-EFGH',
        fingerprint: 'AB:CD',
        url: 'https://10.0.0.2:4778',
        expires_at: new Date(Date.now() + 300_000).toISOString(),
        agents: ['helper'],
      },
    });
    const store = new DevicesStore();
    await store.refresh();
    store.toggleGrant('helper');
    await store.pair();
    expect(JSON.parse(calls.find((call) => call.method === 'POST')!.body!)).toEqual({ agents: ['helper'] });
    expect(store.pairing?.code).toBe('ABCD-EFGH');
    expect(store.pairingExpired(Date.now() + 301_000)).toBe(true);
    listed.push(device('dev_new'));
    await store.refresh();
    expect(store.pairing).toBeNull();
    expect(store.paired?.id).toBe('dev_new');
  });

  it('revokes a device and lists it again', async () => {
    const listed = [device('dev_1')];
    companion({ ...base(listed), 'DELETE /admin/devices/dev_1': () => Object.assign(listed[0]!, { revoked_at: 'now' }) });
    const store = new DevicesStore();
    await store.refresh();
    await store.revoke('dev_1');
    expect(store.devices[0]!.revoked_at).toBe('now');
  });

  it('opens the sign-in page for the browser grant, shows the code for the device grant, and follows the state', async () => {
    let state = 'signed_out';
    let grant: Record<string, unknown> = { grant: 'authorization_code', authorization_url: 'https://login.example.org/auth?x=1', expires_at: '' };
    companion({
      ...base(),
      'POST /admin/cloud/workspaces/acme/login': () => {
        state = 'pending';
        return grant;
      },
      'GET /admin/cloud/workspaces/acme': () => workspace(state),
    });
    const store = new DevicesStore();
    await store.refresh();
    const opened: string[] = [];
    await store.signIn('acme', (url) => opened.push(url));
    expect(opened).toEqual(['https://login.example.org/auth?x=1']);
    expect(store.workspaces[0]!.state).toBe('pending');
    setTimeout(() => (state = 'signed_in'), 20);
    expect((await store.watchSignIn('acme', 10, Date.now() + 5000))?.state).toBe('signed_in');

    grant = { grant: 'device_code', verification_uri: 'https://login.example.org/device', user_code: 'WXYZ-1234', expires_at: '' };
    await store.signIn('acme', (url) => opened.push(url));
    expect(opened).toHaveLength(1);
    expect(store.deviceSignIn).toMatchObject({ workspace: 'acme', user_code: 'WXYZ-1234' });
  });

  it('says that devices are managed on the host itself when the companion refuses a remote browser', async () => {
    companion({
      ...base(),
      'GET /admin/devices/channel': new Response(
        JSON.stringify({ error: { message: 'loopback', type: 'permission_error', code: 'permission_denied', param: null } }),
        {
          status: 403,
        },
      ),
    });
    const store = new DevicesStore();
    await store.refresh();
    expect(store.error).toMatch(/only on the machine the companion runs on/);
  });

  it('says how to sign the app in when the companion asks for the admin credential', async () => {
    companion({
      ...base(),
      'GET /admin/devices': new Response(
        JSON.stringify({ error: { message: 'credential', type: 'authentication_error', code: 'admin_credential_required', param: null } }),
        { status: 401 },
      ),
    });
    const store = new DevicesStore();
    await store.refresh();
    expect(store.error).toMatch(/^Sign in to manage devices. To sign in, run npm run hearth -- open/);
  });
});
