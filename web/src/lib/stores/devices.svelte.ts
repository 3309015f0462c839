import { ApiError } from '$lib/api/client';
import {
  channelStatus,
  createPairing,
  setSecureChannel,
  grantableAgents,
  listDevices,
  listRemoteHosts,
  listWorkspaces,
  revokeDevice,
  signOutOfWorkspace,
  startWorkspaceSignIn,
  workspaceStatus,
} from '$lib/api/devices';
import type { ChannelStatus, CloudLoginStart, CloudWorkspaceStatus, DeviceRecord, PairingCode, RemoteHostStatus } from '#shared/api/remote.js';
import { channelWhere } from '$lib/settings/secure-channel';
import { adminProblem } from './problems';

function describe(error: unknown): string {
  if (error instanceof ApiError && error.code === 'permission_denied') return 'Devices are managed only on the machine the companion runs on (loopback).';
  return adminProblem(error, 'manage devices');
}

/** The Devices screen: the secure channel, pairing, paired devices and hosts, cloud workspace sign-in. */
export class DevicesStore {
  channel = $state<ChannelStatus | null>(null);
  devices = $state<DeviceRecord[]>([]);
  hosts = $state<RemoteHostStatus[]>([]);
  workspaces = $state<CloudWorkspaceStatus[]>([]);
  /** This companion's agents, which a pairing may grant; `granted` are the ones ticked. */
  agents = $state<string[]>([]);
  granted = $state<string[]>([]);
  /** The code on screen, until it is used, expires or is replaced. */
  pairing = $state<PairingCode | null>(null);
  /** The device that paired with the last code shown. */
  paired = $state<DeviceRecord | null>(null);
  /** A device-grant sign-in waiting for its code to be entered. */
  deviceSignIn = $state<(CloudLoginStart & { workspace: string }) | null>(null);
  /** Ids and names with an action under way. */
  busy = $state<Record<string, boolean>>({});
  error = $state<string | null>(null);
  loaded = $state(false);
  /** Turning the secure channel on waits for this confirmation (what it opens, in words). */
  channelRisk = $state<string | null>(null);
  /** The channel was turned on here: it opens when Hearth starts next. */
  channelEnabled = $state(false);

  async refresh(): Promise<void> {
    const results = await Promise.allSettled([channelStatus(), listDevices(), listRemoteHosts(), listWorkspaces(), grantableAgents()]);
    const [channel, devices, hosts, workspaces, agents] = results;
    if (channel.status === 'fulfilled') this.channel = channel.value;
    if (devices.status === 'fulfilled') this.#devicesNow(devices.value);
    if (hosts.status === 'fulfilled') this.hosts = hosts.value;
    if (workspaces.status === 'fulfilled') this.workspaces = workspaces.value;
    if (agents.status === 'fulfilled') {
      this.agents = agents.value;
      this.granted = this.granted.filter((id) => agents.value.includes(id));
    }
    const failed = results.find((result) => result.status === 'rejected');
    this.error = failed ? describe((failed as PromiseRejectedResult).reason) : null;
    this.loaded = true;
  }

  /** Turns the secure channel on (asking first: other machines could connect to it), for the next start. */
  async enableChannel(confirmed = false): Promise<void> {
    await this.#act('channel', async () => {
      try {
        await setSecureChannel(true, confirmed);
      } catch (error) {
        if (error instanceof ApiError && error.code === 'confirmation_required') {
          this.channelRisk = `It listens ${this.channel ? channelWhere(this.channel) : 'on its own port'}: other machines on your networks will be able to connect to it (TLS 1.3). Only devices you pair can use it, and only the agents you grant.`;
          return;
        }
        throw error;
      }
      this.channelRisk = null;
      this.channelEnabled = true;
      this.channel = await channelStatus();
    });
  }

  /** Turns the secure channel off, for the next start: until then it keeps listening (paired devices stay paired). */
  async disableChannel(): Promise<void> {
    await this.#act('channel', async () => {
      await setSecureChannel(false, false);
      this.channelRisk = null;
      this.channelEnabled = false;
      this.channel = await channelStatus();
    });
  }

  toggleGrant(id: string): void {
    this.granted = this.granted.includes(id) ? this.granted.filter((entry) => entry !== id) : [...this.granted, id];
  }

  async pair(): Promise<void> {
    await this.#act('pair', async () => {
      this.pairing = await createPairing(this.granted);
      this.paired = null;
    });
  }

  /** A device that was not listed before appeared while a code was on screen: the code was used. */
  #devicesNow(list: DeviceRecord[]): void {
    const known = this.devices.map((device) => device.id);
    const newcomer = this.loaded && this.pairing ? list.find((device) => !known.includes(device.id)) : undefined;
    if (newcomer) {
      this.paired = newcomer;
      this.pairing = null;
    }
    this.devices = list;
  }

  /** Whether the code on screen can still be used (five minutes; the host also burns it after twenty wrong tries). */
  pairingExpired(now = Date.now()): boolean {
    return this.pairing !== null && Date.parse(this.pairing.expires_at) <= now;
  }

  async revoke(id: string): Promise<void> {
    await this.#act(id, async () => {
      await revokeDevice(id);
      this.#devicesNow(await listDevices());
    });
  }

  /**
   * Starts a workspace sign-in: the browser sign-in opens the authorization page in a new
   * window (it comes back to the companion's loopback address); the device grant shows a code.
   * Then the workspace's state is polled until the sign-in is done or fails.
   */
  async signIn(name: string, openWindow: (url: string) => void = (url) => void window.open(url, '_blank', 'noopener')): Promise<void> {
    await this.#act(name, async () => {
      const start = await startWorkspaceSignIn(name);
      if (start.grant === 'device_code') this.deviceSignIn = { ...start, workspace: name };
      else if (start.authorization_url) openWindow(start.authorization_url);
      this.#replace(await workspaceStatus(name));
    });
  }

  /** Polls a pending workspace until its sign-in completes, fails or expires; returns its last state. */
  async watchSignIn(name: string, interval = 2000, until = Date.now() + 10 * 60_000): Promise<CloudWorkspaceStatus | undefined> {
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, interval));
      let status: CloudWorkspaceStatus;
      try {
        status = await workspaceStatus(name);
      } catch (error) {
        this.error = describe(error);
        return undefined;
      }
      this.#replace(status);
      if (status.state !== 'pending') {
        if (this.deviceSignIn?.workspace === name) this.deviceSignIn = null;
        return status;
      }
    }
    return undefined;
  }

  async signOut(name: string): Promise<void> {
    await this.#act(name, async () => this.#replace(await signOutOfWorkspace(name)));
  }

  #replace(status: CloudWorkspaceStatus): void {
    this.workspaces = this.workspaces.map((entry) => (entry.name === status.name ? status : entry));
  }

  async #act(key: string, action: () => Promise<void>): Promise<void> {
    this.busy[key] = true;
    this.error = null;
    try {
      await action();
    } catch (error) {
      this.error = describe(error);
    } finally {
      delete this.busy[key];
    }
  }
}

export const devices = new DevicesStore();
