/**
 * `hearth engine cache clear` with Hearth running on the data folder asks it to clear (the route
 * the Server screen's Clear uses): the saved conversations go, and the loaded model keeps its
 * folder (llama-server saves into it) and saves its conversations again. With no Hearth running,
 * the command deletes the folders itself. Needs the llama-server build.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import type { SavedConversations } from '#shared/api/admin.js';
import { HEARTH_BIN, runNode } from '../helpers/hearth-process.js';
import { startServer, type RunningServer } from '../helpers/server.js';
import { untilTrue } from '../helpers/until.js';

let server: RunningServer | undefined;
afterAll(async () => {
  await server?.stop();
});

const saved = async (running: RunningServer): Promise<SavedConversations> =>
  (await (await fetch(`${running.url}/admin/engine/conversations`)).json()) as SavedConversations;

describe('hearth engine cache clear', () => {
  it('goes through the running Hearth, whose loaded model keeps its folder and saves again; with none running it deletes the folders', async () => {
    server = await startServer({ env: { HEARTH_ENGINE: 'server' } });
    const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
    const ask = (content: string) =>
      client.chat.completions.create({
        model: 'tiny',
        max_tokens: 4,
        temperature: 0,
        messages: [
          { role: 'system', content: 'You are a careful assistant. '.repeat(30) },
          { role: 'user', content },
        ],
      });
    await ask('First question');
    // Unloaded, it saves the conversation; loaded again, its store holds it.
    await fetch(`${server.url}/admin/models/tiny/unload`, { method: 'POST' });
    expect((await saved(server)).files).toBe(1);
    await fetch(`${server.url}/admin/models/tiny/load`, { method: 'POST' });
    const slots = join(server.dataDir, 'engine', 'slots');
    const [folder] = readdirSync(slots);

    const cleared = await runNode(HEARTH_BIN, ['engine', 'cache', 'clear', '--data-dir', server.dataDir]);
    expect(cleared.code, cleared.stderr).toBe(0);
    expect(cleared.stdout).toMatch(/^Deleted the saved conversations \(\d+ MB\)\.\n$/);
    expect((await saved(server)).files).toBe(0);
    expect(existsSync(join(slots, folder!))).toBe(true);

    await ask('Another question');
    await fetch(`${server.url}/admin/models/tiny/unload`, { method: 'POST' });
    await untilTrue(async () => (await saved(server!)).files === 1, 'the conversation saved again');

    expect(await server.stop()).toBe(0);
    server = undefined;
    const alone = await runNode(HEARTH_BIN, ['engine', 'cache', 'clear', '--data-dir', join(slots, '..', '..')]);
    expect(alone.code, alone.stderr).toBe(0);
    expect(existsSync(slots)).toBe(false);
  });
});
