/** The secure channel's state in words for the Devices screen: where it listens, and what waits for a restart. */
import type { ChannelStatus } from '#shared/api/remote.js';

/** Where the channel listens (or will): a wildcard address is every network interface of the machine. */
export function channelWhere(channel: Pick<ChannelStatus, 'host' | 'port'>): string {
  const port = channel.port ? `port ${channel.port}` : 'a port chosen when it opens';
  if (['0.0.0.0', '::', '[::]'].includes(channel.host)) return `on every network interface of this machine (all its addresses), ${port}`;
  if (['127.0.0.1', '::1', '[::1]', 'localhost'].includes(channel.host)) return `on this machine only (${channel.host}), ${port}`;
  return `at ${channel.host} only, ${port}`;
}

/** The channel's state in one sentence, and whether a restart is what it waits for. */
export function channelState(channel: ChannelStatus): { text: string; restart: boolean } {
  const where = channelWhere(channel);
  if (channel.listening && channel.enabled)
    return { text: `On: listening ${where}${channel.url ? `. Devices pair with ${channel.url}` : ''}.`, restart: false };
  if (channel.listening) return { text: `Turned off, but it still listens ${where} until Hearth restarts.`, restart: true };
  if (channel.enabled) return { text: `Turned on: it opens ${where} when Hearth restarts.`, restart: true };
  return { text: "Off: other machines cannot reach this companion's agents.", restart: false };
}

/** Why "Show a pairing code" cannot be used now, or null when it can. */
export function pairingBlocked(channel: ChannelStatus | null): { text: string; restart: boolean } | null {
  if (!channel) return { text: "Waiting for the secure channel's state.", restart: false };
  if (channel.listening) return null;
  if (channel.enabled) return { text: 'A device can pair once the secure channel is open: it opens when Hearth restarts.', restart: true };
  return { text: 'A device pairs over the secure channel, which is off: turn it on above first.', restart: false };
}
