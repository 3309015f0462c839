import { describe, expect, it } from 'vitest';
import { channelState, channelWhere, pairingBlocked } from '$lib/settings/secure-channel';
import type { ChannelStatus } from '#shared/api/remote.js';

const channel = (over: Partial<ChannelStatus>): ChannelStatus => ({
  enabled: true,
  listening: true,
  host: '0.0.0.0',
  port: 4778,
  url: 'https://10.0.0.2:4778',
  fingerprint: 'AB:CD',
  ...over,
});

describe('the secure channel in words', () => {
  it('says a wildcard address is every network interface, with the port', () => {
    expect(channelWhere({ host: '0.0.0.0', port: 4778 })).toBe('on every network interface of this machine (all its addresses), port 4778');
    expect(channelWhere({ host: '::', port: 4778 })).toMatch(/^on every network interface/);
    expect(channelWhere({ host: '127.0.0.1', port: 0 })).toBe('on this machine only (127.0.0.1), a port chosen when it opens');
    expect(channelWhere({ host: '192.168.1.5', port: 4778 })).toBe('at 192.168.1.5 only, port 4778');
  });

  it('says when a change waits for a restart: turned on but not open, turned off but still open', () => {
    expect(channelState(channel({}))).toEqual({
      text: 'On: listening on every network interface of this machine (all its addresses), port 4778. Devices pair with https://10.0.0.2:4778.',
      restart: false,
    });
    expect(channelState(channel({ listening: false, url: null }))).toMatchObject({
      text: expect.stringMatching(/^Turned on: it opens .* when Hearth restarts\.$/),
      restart: true,
    });
    expect(channelState(channel({ enabled: false }))).toMatchObject({
      text: expect.stringMatching(/^Turned off, but it still listens .* until Hearth restarts\.$/),
      restart: true,
    });
    expect(channelState(channel({ enabled: false, listening: false, url: null }))).toMatchObject({ restart: false, text: expect.stringMatching(/^Off/) });
  });

  it('gives the pairing button a reason whenever it cannot be used', () => {
    expect(pairingBlocked(channel({}))).toBeNull();
    expect(pairingBlocked(null)?.text).toMatch(/Waiting/);
    expect(pairingBlocked(channel({ listening: false }))).toMatchObject({ restart: true });
    expect(pairingBlocked(channel({ enabled: false, listening: false }))).toMatchObject({ restart: false, text: expect.stringMatching(/turn it on above/) });
  });
});
