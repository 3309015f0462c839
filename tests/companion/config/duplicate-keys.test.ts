import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, DEFAULT_DOCUMENT_TEXT, loadConfigFile } from '../../../companion/src/config/document.js';
import { tempFolder } from '../../helpers/temp.js';

/** The 1-based number of the first line of `text` that is exactly `line`. */
const lineOf = (text: string, line: string) => text.split('\n').indexOf(line) + 1;

function problemOf(text: string): string {
  const file = join(tempFolder('config'), 'config.yaml');
  writeFileSync(file, text);
  try {
    loadConfigFile(file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error('the document was accepted');
}

describe('a key written twice in config.yaml', () => {
  it("a models: block uncommented from the generated file's examples, with the one the app wrote below: both lines named, and merging them said", () => {
    // The app wrote a setting of its own (a models: section at the end); the person then uncomments the example block.
    const text = `${DEFAULT_DOCUMENT_TEXT.replace('# models:\n#   dirs: []', 'models:\n  dirs: []')}models:\n  threads: 2\n`;
    const first = lineOf(text, 'models:');
    const second = text.split('\n').lastIndexOf('models:') + 1;
    expect(second).toBeGreaterThan(first);

    const message = problemOf(text);
    expect(message).toContain(`"models" is written twice in the same place (lines ${first} and ${second})`);
    expect(message).toMatch(/Merge the two into one "models:" block/);
    expect(message).not.toContain('Map keys must be unique');
  });

  it('a key twice inside a section names the lines of that section, not of another with the same key', () => {
    const text = 'version: 1\nserver:\n  port: 4777\nmodels:\n  threads: 2\n  dirs: []\n  threads: 4\n';
    const message = problemOf(text);
    expect(message).toContain('"threads" is written twice in the same place (lines 5 and 7)');
  });
});
