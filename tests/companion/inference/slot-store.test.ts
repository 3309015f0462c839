/**
 * The saved-slot store's bookkeeping: the longest shared prefix wins, the disk budget lets the
 * least recently used files go first, a restore that fails deletes its file, and `clear` empties
 * the folder. The server side is a stand-in that writes the file llama-server would write (the
 * real round trip is tests/companion/inference/server-slot-restore.test.ts).
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ServerClient } from '../../../companion/src/inference/server/client.js';
import { EngineHttpError } from '../../../companion/src/inference/server/client.js';
import { clearSlotFolders, slotUsage, SlotStore } from '../../../companion/src/inference/server/slot-store.js';
import { silentLogger } from '../../../companion/src/logger.js';
import { tempFolder } from '../../helpers/temp.js';

const SIZE = 1000;

/** Writes a file of SIZE bytes for a save; a restore of a file named in `broken` fails as llama-server's does. */
function server(folder: string, broken = new Set<string>()): ServerClient {
  return {
    json: (_method: string, path: string, body: { filename: string }) => {
      if (path.endsWith('action=save')) {
        writeFileSync(join(folder, body.filename), Buffer.alloc(SIZE));
        return Promise.resolve({ n_saved: 1e9, n_written: SIZE });
      }
      if (broken.has(body.filename)) return Promise.reject(new EngineHttpError(400, 'Unable to restore slot'));
      return Promise.resolve({});
    },
  } as unknown as ServerClient;
}

const conversation = (first: number, length = 40) => Array.from({ length }, (_, index) => first * 1000 + index);

describe('the saved-slot store', () => {
  it('matches a prompt to the file with the longest shared prefix, and not below the minimum', async () => {
    const folder = join(tempFolder('slots'), 'slots', 'tiny');
    const store = new SlotStore(folder, () => 10 * SIZE, silentLogger);
    const client = server(folder);
    await store.save(client, 0, conversation(1));
    await store.save(client, 0, conversation(2));
    expect(store.match([...conversation(2), 7, 8])?.entry.tokens).toEqual(conversation(2));
    expect(store.match(conversation(3))).toBeUndefined();
    // A longer state of the same conversation replaces the shorter one.
    await store.save(client, 0, conversation(2, 60));
    expect(store.saved).toHaveLength(2);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    for (const file of readdirSync(folder)) expect(statSync(join(folder, file)).mode & 0o777).toBe(0o600);
  });

  it('keeps to the disk budget, the least recently used going first', async () => {
    const folder = join(tempFolder('slots'), 'slots', 'tiny');
    const store = new SlotStore(folder, () => 2 * SIZE, silentLogger);
    const client = server(folder);
    await store.save(client, 0, conversation(1), 1000);
    await store.save(client, 0, conversation(2), 3000);
    await store.save(client, 0, conversation(3), 2000);
    expect(store.saved.map((entry) => entry.tokens[0])).toEqual([2000, 3000]);
    expect(readdirSync(folder).filter((file) => file.endsWith('.bin'))).toHaveLength(2);
    // A store opened again on the folder finds the same files.
    expect(new SlotStore(folder, () => 2 * SIZE, silentLogger).saved).toHaveLength(2);
  });

  it('deletes a file that does not restore, and clears every file', async () => {
    const runDir = tempFolder('engine-run');
    const folder = join(runDir, 'slots', 'tiny');
    const broken = new Set<string>();
    const store = new SlotStore(folder, () => 10 * SIZE, silentLogger);
    const client = server(folder, broken);
    await store.save(client, 0, conversation(1));
    await store.save(client, 0, conversation(2));
    const [bad, good] = store.saved;
    broken.add(bad!.file);
    expect(await store.restore(client, 1, bad!)).toBe(false);
    expect(existsSync(join(folder, bad!.file))).toBe(false);
    expect(await store.restore(client, 1, good!)).toBe(true);
    const index = statSync(join(folder, 'index.json')).size;
    expect(clearSlotFolders(runDir)).toBe(SIZE + index);
    expect(existsSync(join(runDir, 'slots'))).toBe(false);
  });

  it("counts every model's files, and a clear empties a loaded model's store in place while other folders go", async () => {
    const runDir = tempFolder('engine');
    const loadedFolder = join(runDir, 'slots', 'loaded');
    const otherFolder = join(runDir, 'slots', 'other');
    const loaded = new SlotStore(loadedFolder, () => 10 * SIZE, silentLogger);
    const other = new SlotStore(otherFolder, () => 10 * SIZE, silentLogger);
    await loaded.save(server(loadedFolder), 0, conversation(1));
    await loaded.save(server(loadedFolder), 1, conversation(2));
    await other.save(server(otherFolder), 0, conversation(3));
    const before = slotUsage(runDir);
    expect(before.files).toBe(3);
    expect(before.bytes).toBeGreaterThan(3 * SIZE);
    expect(clearSlotFolders(runDir, [loaded])).toBeGreaterThanOrEqual(3 * SIZE);
    expect(slotUsage(runDir).files).toBe(0);
    expect(loaded.saved).toEqual([]);
    // The loaded model's process keeps its folder (llama-server saves into it), and saves again.
    expect(existsSync(loadedFolder)).toBe(true);
    expect(existsSync(otherFolder)).toBe(false);
    await loaded.save(server(loadedFolder), 0, conversation(4));
    expect(slotUsage(runDir).files).toBe(1);
  });
});
