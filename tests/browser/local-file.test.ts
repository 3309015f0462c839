/** A GGUF picked from the user's disk is stored in the browser (OPFS), survives a reload, runs, and can be removed. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tinyModelPath } from '../helpers/models.js';
import { startServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { lastReply, replyEnds, send, setSetting } from './app-helpers.js';
import { sharedBrowserApp } from './harness.js';

const app = sharedBrowserApp({ server: () => startServer({ withModel: false }) });

describe('a GGUF file from this device', () => {
  it('is refused when it is not GGUF, stored when it is, used for chat, and removed on request', async () => {
    const { context, page, errors } = await app.open('/models');
    await page.getByTestId('wllama-status').getByText('Ready').waitFor();

    const bogus = join(tempFolder('bogus'), 'notes.gguf');
    writeFileSync(bogus, 'this is not a model');
    await page.getByLabel('Add a GGUF file from this device').setInputFiles(bogus);
    await expect
      .poll(() => page.getByRole('alert').innerText())
      .toBe('notes.gguf was not stored: notes.gguf is not a GGUF model file (it does not start with "GGUF").');

    await page.getByLabel('Add a GGUF file from this device').setInputFiles(await tinyModelPath());
    const card = page.getByRole('listitem', { name: 'tiny-1', exact: true });
    await card.waitFor();
    expect(await card.innerText()).toContain('from file: tiny-1.gguf');

    await page.reload();
    await card.waitFor();
    await card.getByRole('button', { name: 'Use in chat' }).click();
    await page.waitForURL(`${app.server.url}/`);
    await expect.poll(() => page.locator('#model-picker').getAttribute('data-value')).toBe('wllama:tiny-1.gguf');
    await setSetting(page, 'Max tokens', '8');
    await send(page, 'Hello from a file');
    expect((await replyEnds(page, 'done', 120_000)).length).toBeGreaterThan(0);
    expect(await lastReply(page).getByTestId('stats').innerText()).toMatch(/^8 tokens/);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Models' }).click();
    await card.getByRole('button', { name: 'Remove tiny-1 from this browser' }).click();
    await card.getByRole('button', { name: 'Remove tiny-1' }).click();
    await page.getByText('No GGUF stored yet.').waitFor();
    await page.reload();
    await page.getByText('No GGUF stored yet.').waitFor();
    expect(errors).toEqual([]);
    await context.close();
  });
});
