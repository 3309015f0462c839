/**
 * Where the browser tests find Chromium. A module of its own (no vitest hooks imported), so the
 * global set-up can check for it before any test file runs.
 */
import { existsSync } from 'node:fs';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser tests cannot run here, or undefined when Chromium is where they look. */
export function chromiumMissing(): string | undefined {
  if (existsSync(CHROMIUM)) return undefined;
  return [
    `The browser tests (tests/browser) need Chromium, and there is none at ${CHROMIUM}.`,
    'Install it (Debian/Ubuntu: sudo apt-get install -y chromium), or set CHROMIUM_PATH to a',
    'Chromium or Google Chrome binary, e.g. CHROMIUM_PATH=/usr/bin/google-chrome npm test.',
  ].join('\n');
}
