import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];

/**
 * A new folder under the system temp folder (`hearth-test-NAME-…`), removed after the last test
 * of the file that made it. This module's afterAll is registered when a test file imports it, so
 * it runs after the file's own afterAll hooks (which stop the servers using the folders).
 */
export function tempFolder(name = 'data'): string {
  const folder = mkdtempSync(join(tmpdir(), `hearth-test-${name}-`));
  made.push(folder);
  return folder;
}

afterAll(() => {
  for (const folder of made.splice(0)) rmSync(folder, { recursive: true, force: true });
});
