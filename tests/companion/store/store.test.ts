import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../../companion/src/store/database.js';
import { writeFileAtomic } from '../../../companion/src/store/files.js';
import { DataDirectoryBusyError, lockDataDirectory } from '../../../companion/src/store/lock.js';
import { MIGRATIONS } from '../../../companion/src/store/migrations.js';
import { SecretStore } from '../../../companion/src/store/secrets.js';

const LOCK_MODULE = fileURLToPath(new URL('../../../companion/src/store/lock.ts', import.meta.url));
const LATEST = MIGRATIONS.at(-1)!.version;

let root: string;
let counter = 0;
const open: Db[] = [];
const children: ChildProcess[] = [];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'hearth-store-'));
});

afterEach(() => {
  for (const db of open.splice(0)) if (db.open) db.close();
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

function folder(): string {
  const path = join(root, `case-${++counter}`);
  mkdirSync(path, { recursive: true });
  return path;
}

function opened(file: string): Db {
  const db = openDatabase(file);
  open.push(db);
  return db;
}

describe('openDatabase', () => {
  it('opens a real file in WAL mode with foreign keys on and every migration applied', () => {
    const file = join(folder(), 'hearth.db');
    const db = opened(file);
    expect(existsSync(file)).toBe(true);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST);
    const tables = db
      .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
      .all()
      .map((row) => row.name);
    expect(tables).toEqual(expect.arrayContaining(['responses', 'thread_measurements']));
    // WAL mode is a property of the file: a plain connection sees it too.
    db.close();
    const plain = new Database(file);
    expect(plain.pragma('journal_mode', { simple: true })).toBe('wal');
    plain.close();
  });

  it('migration versions are numbered upwards from 1 without gaps', () => {
    expect(MIGRATIONS.map((migration) => migration.version)).toEqual(MIGRATIONS.map((_, index) => index + 1));
  });

  it('reopening is idempotent: migrations are not applied again and data survives', () => {
    const file = join(folder(), 'hearth.db');
    const first = opened(file);
    first.prepare('INSERT INTO thread_measurements (model_key, threads, measured_at) VALUES (?, ?, ?)').run('m:1', 2, 123);
    const schemaBefore = first.prepare('SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name').all();
    first.close();
    for (let round = 0; round < 3; round++) {
      const again = opened(file);
      expect(again.pragma('user_version', { simple: true })).toBe(LATEST);
      expect(again.prepare('SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY name').all()).toEqual(schemaBefore);
      expect(again.prepare('SELECT threads FROM thread_measurements WHERE model_key = ?').get('m:1')).toEqual({ threads: 2 });
      again.close();
    }
  });

  it('brings an older schema up to date without touching what was there', () => {
    const file = join(folder(), 'hearth.db');
    const old = new Database(file);
    old.pragma('user_version = 0');
    old.exec('CREATE TABLE unrelated (x INTEGER)');
    old.prepare('INSERT INTO unrelated VALUES (42)').run();
    old.close();
    const db = opened(file);
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST);
    expect(db.prepare('SELECT x FROM unrelated').get()).toEqual({ x: 42 });
  });

  it('refuses a database from a newer schema with a clear message and leaves it unchanged', () => {
    const file = join(folder(), 'hearth.db');
    const future = new Database(file);
    future.pragma(`user_version = ${LATEST + 5}`);
    future.close();
    expect(() => opened(file)).toThrow(new RegExp(`newer Hearth.*schema ${LATEST + 5}.*${LATEST}.*Upgrade`, 's'));
    const check = new Database(file);
    expect(check.pragma('user_version', { simple: true })).toBe(LATEST + 5);
    check.close();
  });
});

describe('SecretStore', () => {
  it('writes its file with mode 0600 and reads it back in a new instance', () => {
    const file = join(folder(), 'secrets.json');
    const store = new SecretStore(file);
    expect(existsSync(file)).toBe(false);
    store.set('OPENAI_API_KEY', 'sk-one');
    store.set('_other9', 'two');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = new SecretStore(file);
    expect(again.names()).toEqual(['OPENAI_API_KEY', '_other9']);
    expect(again.resolve('secret:OPENAI_API_KEY')).toBe('sk-one');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ OPENAI_API_KEY: 'sk-one', _other9: 'two' });
  });

  it('tightens an existing secrets file to 0600 when it opens it', () => {
    const file = join(folder(), 'secrets.json');
    writeFileSync(file, JSON.stringify({ KEY: 'v' }));
    chmodSync(file, 0o644);
    const store = new SecretStore(file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(store.resolve('secret:KEY')).toBe('v');
  });

  it('resolves secret: from the file and env: from the environment; anything else is undefined', () => {
    const store = new SecretStore(join(folder(), 'secrets.json'));
    store.set('KEY', 'from-file');
    const name = `HEARTH_TEST_SECRET_${process.pid}`;
    process.env[name] = 'from-env';
    try {
      expect(store.resolve('secret:KEY')).toBe('from-file');
      expect(store.resolve(`env:${name}`)).toBe('from-env');
      expect(store.resolve('secret:MISSING')).toBeUndefined();
      expect(store.resolve(`env:${name}_UNSET`)).toBeUndefined();
      expect(store.resolve('KEY')).toBeUndefined();
      expect(store.resolve('vault:KEY')).toBeUndefined();
      expect(store.resolve(`secret:${name}`)).toBeUndefined();
      expect(store.resolve('env:KEY')).toBe(process.env.KEY);
    } finally {
      delete process.env[name];
    }
  });

  it('refuses bad names and writes nothing for them', () => {
    const file = join(folder(), 'secrets.json');
    const store = new SecretStore(file);
    for (const bad of ['', 'has-dash', '1starts_with_digit', 'has space', 'dot.ted', 'secret:X', 'ünï']) {
      expect(() => store.set(bad, 'value'), JSON.stringify(bad)).toThrow(/letters, digits and underscores/);
    }
    expect(existsSync(file)).toBe(false);
    expect(store.names()).toEqual([]);
  });

  it('refuses a corrupt secrets file with a message naming the file, never its content', () => {
    const file = join(folder(), 'secrets.json');
    writeFileSync(file, '{"KEY": "sk-half-written');
    let caught: unknown;
    try {
      new SecretStore(file);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(Error);
    expect((caught as Error).message).toContain(file);
    expect((caught as Error).message).not.toContain('sk-half-written');
  });

  it('deletes a secret from the file', () => {
    const file = join(folder(), 'secrets.json');
    const store = new SecretStore(file);
    store.set('A', '1');
    store.set('B', '2');
    expect(store.delete('A')).toBe(true);
    expect(store.delete('A')).toBe(false);
    expect(new SecretStore(file).names()).toEqual(['B']);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});

/** A real second process that holds the lock on `directory` until killed. */
async function lockInChild(directory: string, file: string): Promise<ChildProcess> {
  const code = `import { lockDataDirectory } from ${JSON.stringify(LOCK_MODULE)};\nlockDataDirectory(${JSON.stringify(directory)}, ${JSON.stringify(file)});\nprocess.stdout.write('locked\\n');\nsetInterval(() => {}, 1000);\n`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('locked')) resolve();
    });
    child.once('exit', (status) => reject(new Error(`lock holder exited with ${status}: ${err}`)));
  });
  return child;
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/** The pid a lock file names (its first word; the holder's start time follows). */
function lockPid(file: string): number {
  return Number.parseInt(readFileSync(file, 'utf8').split(' ')[0]!, 10);
}

/** A process that has exited but is not reaped (a zombie), and the live process holding it. */
async function zombie(): Promise<{ pid: number; parent: ChildProcess }> {
  // The shell starts a short sleep in the background, then becomes a long `sleep`, which never reaps it.
  const parent = spawn('sh', ['-c', 'sleep 1 & echo $!; exec sleep 600'], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.push(parent);
  const pid = await new Promise<number>((resolve) => parent.stdout!.once('data', (chunk: Buffer) => resolve(Number.parseInt(chunk.toString(), 10))));
  const state = () => {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2];
  };
  await expect.poll(state).toBe('Z');
  return { pid, parent };
}

/** A fresh folder and the path of its lock file. */
function lockPlace(): { directory: string; file: string } {
  const directory = folder();
  return { directory, file: join(directory, 'hearth.lock') };
}

/** Locks the folder from this process, checks that the lock file now names it, and answers the unlock. */
function lockHere(directory: string, file: string): () => void {
  const unlock = lockDataDirectory(directory, file);
  expect(lockPid(file)).toBe(process.pid);
  return unlock;
}

describe('lockDataDirectory', () => {
  it('a second lock on a directory another live process holds throws DataDirectoryBusyError naming its pid', async () => {
    const { directory, file } = lockPlace();
    const holder = await lockInChild(directory, file);
    expect(lockPid(file)).toBe(holder.pid);
    let caught: unknown;
    try {
      lockDataDirectory(directory, file);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(DataDirectoryBusyError);
    const message = (caught as Error).message;
    expect(message).toContain(`pid ${holder.pid}`);
    expect(message).toContain(directory);
    expect(message).toMatch(/already using the data directory/);
    // The refused attempt leaves the holder's lock alone.
    expect(lockPid(file)).toBe(holder.pid);
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    // Its holder died without cleaning up: now the lock is stale and taken over.
    const unlock = lockHere(directory, file);
    unlock();
    expect(existsSync(file)).toBe(false);
  });

  it('takes over a stale lock left by a dead process', async () => {
    const { directory, file } = lockPlace();
    const pid = await deadPid();
    writeFileSync(file, String(pid));
    const unlock = lockHere(directory, file);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    unlock();
    expect(existsSync(file)).toBe(false);
  });

  it('takes over a lock whose holder died a moment ago and is not yet reaped (a zombie, just after SIGKILL)', async () => {
    const { directory, file } = lockPlace();
    const { pid } = await zombie();
    writeFileSync(file, String(pid));
    const unlock = lockHere(directory, file);
    unlock();
  });

  it("takes over a lock that names this process's own pid when this process did not take it (a container restarted: Hearth is pid 1 again)", () => {
    const { directory, file } = lockPlace();
    writeFileSync(file, `${process.pid} 1`);
    const unlock = lockHere(directory, file);
    // Taken by this process now: a second lock from here is refused.
    expect(() => lockDataDirectory(directory, file)).toThrow(DataDirectoryBusyError);
    unlock();
  });

  it('takes over a lock whose pid now belongs to another process (the start time differs)', async () => {
    const { directory, file } = lockPlace();
    const holder = await lockInChild(directory, file);
    const [pid, start] = readFileSync(file, 'utf8').split(' ');
    expect(Number(pid)).toBe(holder.pid);
    expect(start).toMatch(/^\d+$/);
    // The same pid with another start time: the process that wrote the lock is gone.
    writeFileSync(file, `${pid} ${Number(start) - 1}`);
    const unlock = lockHere(directory, file);
    unlock();
  });

  it('takes over a lock file with garbage in it', () => {
    const { directory, file } = lockPlace();
    writeFileSync(file, 'not a pid');
    const unlock = lockHere(directory, file);
    unlock();
  });

  it('lock then unlock then lock again works', () => {
    const { directory, file } = lockPlace();
    lockDataDirectory(directory, file)();
    expect(existsSync(file)).toBe(false);
    const unlock = lockDataDirectory(directory, file);
    expect(existsSync(file)).toBe(true);
    unlock();
  });
});

describe('writeFileAtomic', () => {
  it('writes, overwrites and leaves no temp files', () => {
    const directory = folder();
    const file = join(directory, 'doc.txt');
    writeFileAtomic(file, 'first');
    expect(readFileSync(file, 'utf8')).toBe('first');
    for (let index = 0; index < 20; index++) writeFileAtomic(file, `content ${index}`);
    expect(readFileSync(file, 'utf8')).toBe('content 19');
    expect(readdirSync(directory)).toEqual(['doc.txt']);
  });

  it('creates missing folders and honours the mode', () => {
    const directory = folder();
    const file = join(directory, 'a', 'b', 'secret.json');
    writeFileAtomic(file, '{}', 0o600);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(directory, 'a', 'b'))).toEqual(['secret.json']);
  });

  it('a write that fails leaves no temp file behind', () => {
    const directory = folder();
    // The target is a folder, so the final rename fails.
    const file = join(directory, 'occupied');
    mkdirSync(file);
    expect(() => writeFileAtomic(file, 'content')).toThrow();
    expect(readdirSync(directory)).toEqual(['occupied']);
  });
});
