/**
 * `npm start` runs the companion compiled ahead into build/companion. Everything the sources load
 * beside themselves must be in that build too: the image engine thread's entry is the one such
 * file, so a generation through the bundled server proves the thread starts there.
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
