/**
 * Wire types of the two outward agent directions: devices paired with this host over the secure
 * channel (host side, loopback-only /admin/devices), the hosts this companion is paired with
 * (client side, /admin/remote-hosts), and cloud workspaces signed in to (/admin/cloud).
 */

/** POST /admin/devices/pair: a one-time pairing code for the next device. */
export interface CreatePairingRequest {
  /** Agents the paired device may list and run; none until granted. */
  agents?: string[];
}

/** What the owner reads out to the other machine (`hearth devices pair --json` prints it). */
export interface PairingCode {
  /** Eight characters shown as XXXX-XXXX; single use, 5 minutes, 5 tries. */
  code: string;
  /** SHA-256 fingerprint of this host's TLS certificate, colon-separated hex. */
  fingerprint: string;
  /** The secure channel's address, https://HOST:PORT. */
  url: string;
  expires_at: string;
  agents: string[];
}

export interface DeviceRecord {
  id: string;
  name: string;
  /** Agents this device may list and run. */
  agents: string[];
  /** SHA-256 fingerprint of the client certificate issued at pairing. */
  fingerprint: string;
  created_at: string;
  last_seen_at: string | null;
  revoked_at: string | null;
  /** Open connections from this device now. */
  connections: number;
}

export interface DeviceList {
  object: 'list';
  data: DeviceRecord[];
}

/** State of the secure channel on this host (GET /admin/devices/channel). */
export interface ChannelStatus {
  enabled: boolean;
  /** Whether the TLS listener is up (false until a restart after enabling it; true until a restart after turning it off). */
  listening: boolean;
  /** The address it listens on (or will, after a restart): `0.0.0.0` or `::` is every network interface of the machine. */
  host: string;
  /** Its port, as bound while listening (else as configured; 0: chosen when it opens). */
  port: number;
  url: string | null;
  fingerprint: string | null;
}

/** POST /pair on the secure channel: the code and a certificate signing request (PEM). */
export interface PairRequest {
  code: string;
  csr: string;
  /** How the host lists the device. */
  name: string;
}

export interface PairResponse {
  device_id: string;
  /** The device's client certificate (PEM), issued by the host's device CA. */
  certificate: string;
  agents: string[];
}

/** POST /admin/remote-hosts: pair this companion with another machine's Hearth. */
export interface AddRemoteHostRequest {
  name: string;
  url: string;
  code: string;
  fingerprint: string;
}

export type RemoteHostState = 'connected' | 'unreachable' | 'certificate_changed' | 'refused' | 'not_paired';

export interface RemoteHostStatus {
  name: string;
  url: string;
  fingerprint: string;
  device_id: string | null;
  state: RemoteHostState;
  message: string | null;
  /** Agent ids on that host this device was granted, as the host lists them. */
  agents: string[];
}

export interface RemoteHostList {
  object: 'list';
  data: RemoteHostStatus[];
}

export type CloudSignInState = 'signed_out' | 'signed_in' | 'revoked' | 'mismatch' | 'pending';

export interface CloudAgentSummary {
  /** `cloud:<workspace>/<agent>` */
  id: string;
  name: string;
  description: string;
  streaming: boolean;
  card_url: string;
}

export interface CloudWorkspaceStatus {
  name: string;
  issuer: string;
  workspace_id: string;
  grant: 'authorization_code' | 'device_code';
  state: CloudSignInState;
  /** The signed-in account (the ID token's subject). */
  subject: string | null;
  /** When the access token in hand expires; it is refreshed before then. */
  expires_at: string | null;
  /** When the sign-in in hand was made. */
  signed_in_at: string | null;
  /** Why the last sign-in attempt failed, or why the sign-in in hand cannot be used. */
  message: string | null;
}

export interface CloudWorkspaceList {
  object: 'list';
  data: CloudWorkspaceStatus[];
}

/** POST /admin/cloud/workspaces/{name}/login: where the owner goes to sign in. */
export interface CloudLoginStart {
  grant: 'authorization_code' | 'device_code';
  /** Authorization code + PKCE: open this address in a browser on this machine. */
  authorization_url?: string;
  /** Device authorization grant: visit this address (on any device) and enter user_code. */
  verification_uri?: string;
  verification_uri_complete?: string;
  user_code?: string;
  expires_at: string;
}
