import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedApp } from '../../helpers/app.js';

/*
 * The app's pages may not be framed by another site (clickjacking of load/unload buttons), and
 * carry a Content-Security-Policy whose script-src allows exactly their own inline start-up
 * script (14). A small stand-in for build/web keeps this test independent of the web build.
 */

const SCRIPT = '\n  window.started = true;\n';
const hearth = sharedApp({
  withModel: false,
  prepare: () => {
    const webRoot = mkdtempSync(join(tmpdir(), 'hearth-web-'));
    const page = `<!doctype html><html><head><title>Hearth</title></head><body><script>${SCRIPT}</script><script type="module" src="/_app/immutable/app.js"></script></body></html>`;
    writeFileSync(join(webRoot, 'index.html'), page);
    writeFileSync(join(webRoot, '200.html'), page);
    writeFileSync(join(webRoot, 'sw.js'), 'self.addEventListener("fetch", () => {});');
    mkdirSync(join(webRoot, '_app/immutable'), { recursive: true });
    writeFileSync(join(webRoot, '_app/immutable/app.js'), 'export {};');
    return { webRoot };
  },
});

describe('security headers of the app', () => {
  it('pages (served and fallback) forbid framing and allow only their own inline script', async () => {
    const hash = `'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'`;
    for (const url of ['/', '/index.html', '/server', '/sign-in']) {
      const response = await hearth.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['x-frame-options'], url).toBe('DENY');
      const policy = String(response.headers['content-security-policy']);
      expect(policy, url).toContain("frame-ancestors 'none'");
      expect(policy, url).toContain(`script-src 'self' 'wasm-unsafe-eval' ${hash}`);
      expect(policy, url).toContain("object-src 'none'");
      expect(policy, url).not.toContain("'unsafe-eval'");
      expect(policy, url).not.toMatch(/script-src[^;]*'unsafe-inline'/);
    }
  });

  it('the service worker and other files cannot be framed either', async () => {
    for (const url of ['/sw.js', '/_app/immutable/app.js']) {
      const response = await hearth.app.inject({ method: 'GET', url });
      expect(response.statusCode, url).toBe(200);
      expect(response.headers['x-frame-options'], url).toBe('DENY');
      expect(String(response.headers['content-security-policy']), url).toContain("frame-ancestors 'none'");
    }
  });
});
