import type { Migration } from './migration.js';

/** Migration 9: devices paired over the secure channel, the one-time codes that pair them, and the runs devices started. */
export const migration: Migration = {
  version: 9,
  name: 'paired devices and pairing codes',
  sql: `
      CREATE TABLE remote_devices (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        -- SHA-256 of the client certificate issued at pairing: the device's identity on the channel
        fingerprint TEXT NOT NULL UNIQUE,
        agents_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_seen_at INTEGER,
        revoked_at INTEGER
      );
      CREATE TABLE pairing_codes (
        id TEXT PRIMARY KEY,
        -- SHA-256 of the normalised code; the code itself is shown once
        hash TEXT NOT NULL UNIQUE,
        agents_json TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL,
        failures INTEGER NOT NULL DEFAULT 0,
        used_at INTEGER,
        device_id TEXT
      );
      -- Runs a device started over the channel: it may read and cancel these, and no other
      CREATE TABLE remote_device_runs (
        run_id TEXT PRIMARY KEY,
        device_id TEXT NOT NULL
      );
`,
};
