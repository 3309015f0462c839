import type { ApplyResult } from '#shared/api/admin-config.js';
import type { AgentList } from '#shared/api/agents.js';
import type {
  ChannelStatus,
  CloudLoginStart,
  CloudWorkspaceList,
  CloudWorkspaceStatus,
  DeviceList,
  DeviceRecord,
  PairingCode,
  RemoteHostList,
} from '#shared/api/remote.js';
import { request } from './client';

/* The Devices screen's calls: the secure channel, paired devices, paired hosts, cloud workspaces (loopback-only admin routes). */

export function channelStatus(): Promise<ChannelStatus> {
  return request<ChannelStatus>('/admin/devices/channel', { cache: 'no-store' });
}

export async function listDevices(): Promise<DeviceRecord[]> {
  return (await request<DeviceList>('/admin/devices', { cache: 'no-store' })).data;
}

export function createPairing(agents: string[]): Promise<PairingCode> {
  return request<PairingCode>('/admin/devices/pair', { method: 'POST', body: JSON.stringify({ agents }) });
}

export function revokeDevice(id: string): Promise<DeviceRecord> {
  return request<DeviceRecord>(`/admin/devices/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

export async function listRemoteHosts(): Promise<RemoteHostList['data']> {
  return (await request<RemoteHostList>('/admin/remote-hosts', { cache: 'no-store' })).data;
}

/** This companion's own agents (those a pairing can grant); remote and cloud agents cannot be granted onwards. */
export async function grantableAgents(): Promise<string[]> {
  const agents = (await request<AgentList>('/agents', { cache: 'no-store' })).data as { id: string; source?: string }[];
  return agents.filter((agent) => !agent.source || agent.source === 'local').map((agent) => agent.id);
}

export async function listWorkspaces(): Promise<CloudWorkspaceStatus[]> {
  return (await request<CloudWorkspaceList>('/admin/cloud/workspaces', { cache: 'no-store' })).data;
}

export function workspaceStatus(name: string): Promise<CloudWorkspaceStatus> {
  return request<CloudWorkspaceStatus>(`/admin/cloud/workspaces/${encodeURIComponent(name)}`, { cache: 'no-store' });
}

export function startWorkspaceSignIn(name: string): Promise<CloudLoginStart> {
  return request<CloudLoginStart>(`/admin/cloud/workspaces/${encodeURIComponent(name)}/login`, { method: 'POST' });
}

export function signOutOfWorkspace(name: string): Promise<CloudWorkspaceStatus> {
  return request<CloudWorkspaceStatus>(`/admin/cloud/workspaces/${encodeURIComponent(name)}/logout`, { method: 'POST' });
}

/**
 * Turns the secure channel on or off in the configuration (either takes effect at the next start).
 * Turning it on is high-risk (a listener other machines reach): unconfirmed, the companion refuses
 * it with 409 `confirmation_required` and the risks; confirmed, it is applied.
 */
export async function setSecureChannel(enabled: boolean, confirm: boolean): Promise<ApplyResult> {
  const body = JSON.stringify({ document: { version: 1, server: { remote: { enabled } } }, confirm_high_risk: confirm });
  return request<ApplyResult>('/admin/config/apply', { method: 'POST', body });
}
