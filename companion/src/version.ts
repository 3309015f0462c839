import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { installFolder } from './invocation.js';

/** The version of the package this companion was built from (read from the Hearth folder, wherever this code runs from). */
export const VERSION: string = (JSON.parse(readFileSync(join(installFolder(), 'package.json'), 'utf8')) as { version: string }).version;
