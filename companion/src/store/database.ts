import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

export type Db = Database.Database;

/**
 * Opens the SQLite database in WAL mode and brings its schema up to date. The file is created
 * 0600 first: SQLite gives the -wal and -shm files it makes the database file's mode.
 */
export function openDatabase(file: string): Db {
  closeSync(openSync(file, 'a', 0o600));
  for (const path of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(path)) chmodSync(path, 0o600);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  try {
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  const latest = MIGRATIONS.at(-1)?.version ?? 0;
  if (current > latest) {
    throw new Error(`The database was written by a newer Hearth (schema ${current}, this build knows ${latest}). Upgrade Hearth.`);
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    })();
  }
}
