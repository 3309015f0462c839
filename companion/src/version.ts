import { readFileSync } from 'node:fs';

/** The version of the package this companion was built from. */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
