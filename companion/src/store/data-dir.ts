import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The layout of a data directory (docs/configuration.md). */
export interface DataPaths {
  root: string;
  config: string;
  secrets: string;
  /** The local admin credential (mode 0600). */
  adminToken: string;
  database: string;
  lock: string;
  /** Where a running companion says where it listens (for the CLI). */
  server: string;
  models: string;
  images: string;
  /** Hosted media artifacts (videos copied from the provider). */
  media: string;
  logs: string;
  /** The secure channel's host certificate and device CA (files 0600). */
  remote: string;
  /** Artifacts of cloud agent runs, one folder per run. */
  artifacts: string;
}

export function defaultDataDirectory(): string {
  return join(homedir(), '.hearth');
}

export function dataPaths(root: string): DataPaths {
  const absolute = resolve(root);
  return {
    root: absolute,
    config: join(absolute, 'config.yaml'),
    secrets: join(absolute, 'secrets.json'),
    adminToken: join(absolute, 'admin-token'),
    database: join(absolute, 'hearth.db'),
    lock: join(absolute, 'hearth.lock'),
    server: join(absolute, 'server.json'),
    models: join(absolute, 'models'),
    images: join(absolute, 'images'),
    media: join(absolute, 'media'),
    logs: join(absolute, 'logs'),
    remote: join(absolute, 'remote'),
    artifacts: join(absolute, 'artifacts'),
  };
}

/**
 * Creates the folders. The data folder is private to its owner (0700) and so are the files
 * Hearth keeps in it (0600), also when an older version left them readable.
 */
export function createDataDirectory(paths: DataPaths): void {
  for (const directory of [paths.root, paths.models, paths.images, paths.logs]) mkdirSync(directory, { recursive: true, mode: 0o700 });
  chmodSync(paths.root, 0o700);
  for (const file of [paths.config, paths.secrets, paths.adminToken, paths.server, ...databaseFiles(paths.database)]) {
    if (existsSync(file)) chmodSync(file, 0o600);
  }
}

/** The database and the files SQLite keeps beside it in WAL mode. */
export function databaseFiles(database: string): string[] {
  return [database, `${database}-wal`, `${database}-shm`];
}
