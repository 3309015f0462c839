import { chmodSync, existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../../companion/src/store/database.js';
import { asOwner, testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * The data folder holds transcripts, key hashes and secrets: it is private to its owner (14).
 * The folder is 0700 and every file in it 0600, the database's -wal and -shm included, also
 * for a data folder an older version left readable.
 */

const mode = (path: string) => statSync(path).mode & 0o777;
const FILES = ['config.yaml', 'hearth.db', 'hearth.db-wal', 'hearth.db-shm', 'admin-token', 'hearth.lock'];

describe('data folder permissions', () => {
  it('a new data folder is 0700 and its files 0600', async () => {
    const { app, services, close } = await testApp({ withModel: false });
    try {
      // A write, so the WAL and shared-memory files exist.
      await app.inject(asOwner({ method: 'POST', url: '/admin/keys', payload: { label: 'writes something' } }));
      expect(mode(services.paths.root)).toBe(0o700);
      for (const file of FILES) {
        expect(existsSync(join(services.paths.root, file)), file).toBe(true);
        expect(mode(join(services.paths.root, file)), file).toBe(0o600);
      }
    } finally {
      await close();
    }
  });

  it('a data folder left readable by others is made private on start', async () => {
    const dataDir = await newDataDir(false);
    chmodSync(dataDir, 0o755);
    writeFileSync(join(dataDir, 'config.yaml'), 'version: 1\n', { mode: 0o644 });
    const db = openDatabase(join(dataDir, 'hearth.db'));
    db.prepare('CREATE TABLE IF NOT EXISTS scratch (x)').run();
    for (const file of ['hearth.db', 'hearth.db-wal', 'hearth.db-shm']) if (existsSync(join(dataDir, file))) chmodSync(join(dataDir, file), 0o644);
    db.close();
    chmodSync(join(dataDir, 'hearth.db'), 0o644);
    const { services, close } = await testApp({ dataDir, withModel: false });
    try {
      expect(mode(dataDir)).toBe(0o700);
      for (const file of FILES.filter((name) => existsSync(join(dataDir, name)))) expect(mode(join(dataDir, file)), file).toBe(0o600);
      expect(mode(services.paths.database)).toBe(0o600);
    } finally {
      await close();
    }
  });
});
