/**
 * The Server screen's saved conversations: GET /admin/engine/conversations counts the files the
 * llama-server engine saved under the data folder (every model's) against each model's budget,
 * and DELETE removes them all, as `hearth engine cache clear` does. Owner only.
 */
import { mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClearedConversations, SavedConversations } from '#shared/api/admin.js';
import { asOwner, sharedApp } from '../../helpers/app.js';

const hearth = sharedApp({ withModel: false });

/** Two models' saved states, as the engine leaves them: a file of `bytes` each and their index. */
function saveFiles(bytes: number): void {
  for (const [folder, files] of [
    ['tiny-0123456789ab', ['slot-0000000000000001.bin', 'slot-0000000000000002.bin']],
    ['other-ba9876543210', ['slot-0000000000000003.bin']],
  ] as const) {
    const path = join(hearth.services.paths.root, 'engine', 'slots', folder);
    mkdirSync(path, { recursive: true });
    for (const file of files) writeFileSync(join(path, file), Buffer.alloc(bytes));
    writeFileSync(join(path, 'index.json'), '[]');
  }
}

const get = async (): Promise<SavedConversations> => {
  const response = await hearth.app.inject(asOwner({ method: 'GET', url: '/admin/engine/conversations' }));
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as SavedConversations;
};

describe('/admin/engine/conversations', () => {
  it('counts the saved conversations and the disk they take, against the budget each model has', async () => {
    expect(await get()).toEqual({ files: 0, bytes: 0, budget_bytes: 2048 * 2 ** 20, models: [] });
    saveFiles(1000);
    const saved = await get();
    expect(saved).toMatchObject({ files: 3, bytes: 3004, budget_bytes: 2048 * 2 ** 20 });
    expect(saved.models.sort((a, b) => a.model.localeCompare(b.model))).toEqual([
      { model: 'other', files: 1, bytes: 1002 },
      { model: 'tiny', files: 2, bytes: 2002 },
    ]);
  });

  it('deletes them all and says how much was freed', async () => {
    saveFiles(500);
    const response = await hearth.app.inject(asOwner({ method: 'DELETE', url: '/admin/engine/conversations' }));
    expect(response.statusCode, response.body).toBe(200);
    expect((response.json() as ClearedConversations).freed_bytes).toBe(1504);
    expect(await get()).toMatchObject({ files: 0, bytes: 0 });
    expect(existsSync(join(hearth.services.paths.root, 'engine', 'slots'))).toBe(false);
  });

  it('is refused without the admin credential', async () => {
    saveFiles(10);
    const response = await hearth.app.inject({ method: 'DELETE', url: '/admin/engine/conversations' });
    expect(response.statusCode).toBe(401);
    expect((await get()).files).toBe(3);
  });
});
