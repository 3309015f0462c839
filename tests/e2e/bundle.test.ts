/**
 * `npm start` runs the companion compiled ahead into build/companion. Everything the sources load
 * beside themselves must be in that build too: the image engine thread's entry is the one such
 * file, so a generation through the bundled server proves the thread starts there. The other
 * tests start Hearth from that build (tests/helpers/companion-build.ts), so here it starts from
 * the sources once too, as a developer's edit makes it run.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildBundle, bundleIsFresh } from '../../scripts/companion-bundle.js';
import { imageDataDir, sseEvents } from '../helpers/images.js';
import { startServer } from '../helpers/server.js';

const built = fileURLToPath(new URL('../../build/companion', import.meta.url));

describe('the companion compiled ahead (build/companion)', () => {
  it('holds the image engine thread, and a server started from it generates an image', async () => {
    await buildBundle();
    expect(bundleIsFresh()).toBe(true);
    expect(existsSync(join(built, 'engine-worker.js'))).toBe(true);
    expect(existsSync(join(built, 'start.mjs'))).toBe(true);

    const server = await startServer({ dataDir: imageDataDir({ tiny: {} }), withModel: false, env: { HEARTH_FROM_SOURCE: '' } });
    try {
      const response = await fetch(`${server.url}/v1/images/generations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tiny', prompt: 'from the bundle', size: '64x64', steps: 1, stream: true }),
      });
      expect(response.status).toBe(200);
      const events = sseEvents(await response.text()).map((event) => event.event);
      expect(events).toContain('image.completed');
      expect(events).not.toContain('image.failed');
    } finally {
      await server.stop();
    }
  });
});

describe('the companion from its sources (bin/hearth.js through tsx)', () => {
  it('starts, lists its model and answers a chat completion', async () => {
    const server = await startServer({ env: { HEARTH_FROM_SOURCE: '1' } });
    try {
      const models = (await (await fetch(`${server.url}/v1/models`)).json()) as { data: { id: string }[] };
      expect(models.data.map((model) => model.id)).toContain('tiny');
      const response = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(response.status).toBe(200);
      expect(((await response.json()) as { object: string }).object).toBe('chat.completion');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});
