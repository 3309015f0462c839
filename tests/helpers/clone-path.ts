/**
 * The tests describe Hearth as a fresh clone runs it: `npm install` puts no `hearth` on the PATH,
 * so every printed command reads `npm run hearth -- …`. A developer's `npm link` would change
 * that for everything these tests start; this setup takes such a `hearth` off the PATH of the
 * test process (and so of every process it starts). Tests of the linked form add their own.
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ours = realpathSync(fileURLToPath(new URL('../../bin/hearth.js', import.meta.url)));
const linksHere = (dir: string) => {
  try {
    return existsSync(join(dir, 'hearth')) && realpathSync(join(dir, 'hearth')) === ours;
  } catch {
    return false;
  }
};
process.env.PATH = (process.env.PATH ?? '')
  .split(delimiter)
  .filter((dir) => !dir || !linksHere(dir))
  .join(delimiter);
