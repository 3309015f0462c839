import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';

/**
 * The Content-Security-Policy of the app's pages. `frame-ancestors 'none'` (with X-Frame-Options:
 * DENY for older browsers) keeps every other site from framing the app and tricking a click on
 * load or unload. Scripts come only from the companion itself, plus the inline start-up script
 * of the page by its hash; 'wasm-unsafe-eval' lets the in-browser engines compile WebAssembly.
 * Images and videos the app made may be shown from blob: URLs.
 * connect-src allows https: because in-browser WebGPU models download their weights.
 */
export function contentSecurityPolicy(inlineScripts: readonly string[]): string {
  const hashes = inlineScripts.map((script) => `'sha256-${createHash('sha256').update(script).digest('base64')}'`);
  return [
    "default-src 'self'",
    `script-src 'self' 'wasm-unsafe-eval'${hashes.map((hash) => ` ${hash}`).join('')}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self' data:",
    "connect-src 'self' blob: data: https:",
    "worker-src 'self' blob:",
    "manifest-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The policy for what every other response of the app gets: nothing may frame it. */
export const FRAME_DENIAL = { 'content-security-policy': "frame-ancestors 'none'", 'x-frame-options': 'DENY' } as const;

const cache = new Map<string, { stamp: string; policy: string }>();

/** The policy for a built HTML file, with the hashes of its inline scripts (re-read when the file changes). */
export function policyForPage(file: string): string {
  const info = statSync(file);
  const stamp = `${info.mtimeMs}:${info.size}`;
  const known = cache.get(file);
  if (known?.stamp === stamp) return known.policy;
  const policy = contentSecurityPolicy(inlineScripts(readFileSync(file, 'utf8')));
  cache.set(file, { stamp, policy });
  return policy;
}

/** The bodies of `<script>` elements without a src. */
export function inlineScripts(html: string): string[] {
  return [...html.matchAll(/<script(?![^>]*\bsrc\s*=)[^>]*>([\s\S]*?)<\/script>/gi)].map((match) => match[1]!);
}
