#!/usr/bin/env node
/**
 * Applies patches/<package>+<version>.patch to node_modules/<package> after every `npm install` and
 * `npm ci` (the root package's postinstall). Each patch is a plain unified diff relative to the
 * package's folder, so it can be read, reviewed and offered upstream as it is. Applying is
 * idempotent: a hunk whose result is already there is left alone. A package at another version
 * than the patch names is reported and left unpatched; a hunk that no longer matches fails loudly.
 *
 *   node scripts/patch-dependencies.mjs           apply every patch
 *   node scripts/patch-dependencies.mjs --check   exit 1 unless every patch is applied
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** @typedef {{ before: string, after: string }} Hunk */
/** @typedef {{ warn(line: string): void, error(line: string): void }} Log */

/**
 * Splits a unified diff into files and hunks; each hunk becomes the text it expects and the text it leaves.
 * @param {string} text
 * @returns {{ path: string, hunks: Hunk[] }[]}
 */
export function parsePatch(text) {
  /** @type {{ path: string, hunks: { before: string[], after: string[] }[] }[]} */
  const files = [];
  /** @type {{ path: string, hunks: { before: string[], after: string[] }[] } | undefined} */
  let file;
  /** @type {{ before: string[], after: string[] } | undefined} */
  let hunk;
  for (const line of text.split('\n')) {
    if (line.startsWith('--- ')) continue;
    if (line.startsWith('+++ ')) {
      file = { path: line.slice(4).replace(/^b\//, '').trim(), hunks: [] };
      files.push(file);
      hunk = undefined;
    } else if (line.startsWith('@@') && file) {
      hunk = { before: [], after: [] };
      file.hunks.push(hunk);
    } else if (hunk && line.startsWith(' ')) {
      hunk.before.push(line.slice(1));
      hunk.after.push(line.slice(1));
    } else if (hunk && line.startsWith('-')) hunk.before.push(line.slice(1));
    else if (hunk && line.startsWith('+')) hunk.after.push(line.slice(1));
  }
  return files.map((entry) => ({ path: entry.path, hunks: entry.hunks.map((h) => ({ before: h.before.join('\n'), after: h.after.join('\n') })) }));
}

/**
 * Returns the patched text, or the reason it cannot be patched.
 * @param {string} text
 * @param {Hunk[]} hunks
 * @returns {{ text: string, error?: undefined } | { error: string, text?: undefined }}
 */
export function applyHunks(text, hunks) {
  let result = text;
  for (const [index, { before, after }] of hunks.entries()) {
    if (result.includes(after)) continue;
    const first = result.indexOf(before);
    if (first < 0) return { error: `hunk ${index + 1} does not match` };
    if (result.indexOf(before, first + 1) >= 0) return { error: `hunk ${index + 1} matches more than once` };
    result = result.slice(0, first) + after + result.slice(first + before.length);
  }
  return { text: result };
}

/**
 * Applies (or with `checkOnly`, checks) every patch under `root`/patches; returns the number of problems.
 * @param {string} root
 * @param {{ checkOnly?: boolean, log?: Log }} [options]
 * @returns {number}
 */
export function patchDependencies(root, { checkOnly = false, log = console } = {}) {
  const patchesDir = join(root, 'patches');
  if (!existsSync(patchesDir)) return 0;
  let failures = 0;
  for (const name of readdirSync(patchesDir).filter((entry) => entry.endsWith('.patch'))) {
    const match = /^(.+)\+(\d[^+]*)\.patch$/.exec(name);
    if (!match) continue;
    const [, pkg, version] = match;
    const pkgDir = join(root, 'node_modules', ...pkg.split('+'));
    const manifest = join(pkgDir, 'package.json');
    if (!existsSync(manifest)) continue;
    const installed = JSON.parse(readFileSync(manifest, 'utf8')).version;
    if (installed !== version) {
      log.warn(`patch-dependencies: ${name} is for ${pkg} ${version}, but ${installed} is installed; not applied.`);
      failures++;
      continue;
    }
    for (const file of parsePatch(readFileSync(join(patchesDir, name), 'utf8'))) {
      const target = join(pkgDir, file.path);
      const original = readFileSync(target, 'utf8');
      const outcome = applyHunks(original, file.hunks);
      if (outcome.text === undefined) {
        log.error(`patch-dependencies: ${name}: ${file.path}: ${outcome.error}`);
        failures++;
      } else if (outcome.text !== original) {
        if (checkOnly) {
          log.error(`patch-dependencies: ${name}: ${file.path} is not patched (run: node scripts/patch-dependencies.mjs)`);
          failures++;
        } else writeFileSync(target, outcome.text);
      }
    }
  }
  return failures;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  process.exitCode = patchDependencies(root, { checkOnly: process.argv.includes('--check') }) === 0 ? 0 : 1;
}
