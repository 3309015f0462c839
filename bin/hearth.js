#!/usr/bin/env node
// The `hearth` command. It runs the companion compiled ahead (build/companion, made by `npm start`
// and `npm run build`) while that is newer than every source file, and otherwise the TypeScript
// sources through tsx, so no compile step stands between a change and a start.
import { pathToFileURL } from 'node:url';
import { BUNDLE, bundleIsFresh } from '../scripts/companion-bundle.js';

if (process.env.HEARTH_FROM_SOURCE !== '1' && bundleIsFresh()) {
  await import(pathToFileURL(BUNDLE).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../companion/src/main.ts');
}
