import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const script = join(import.meta.dirname, '../../scripts/check-imports.js');
const made: string[] = [];

/** A repository whose companion/src holds these files (path -> source). */
function repository(sources: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'hearth-imports-'));
  made.push(root);
  for (const [path, text] of Object.entries(sources)) {
    const file = join(root, 'companion/src', path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  return root;
}

function check(root?: string): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [script, ...(root ? [root] : [])], { encoding: 'utf8' });
  return { status: result.status, output: result.stdout + result.stderr };
}

/** The check's output on a repository of these files, after asserting that it refuses them. */
function refused(sources: Record<string, string>): string {
  const { status, output } = check(repository(sources));
  expect(status).toBe(1);
  return output;
}

afterEach(() => {
  for (const root of made.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('npm run lint: the import check', () => {
  it('passes this repository', () => {
    const { status, output } = check();
    expect(output).toContain('no circles');
    expect(status).toBe(0);
  });

  it.each([
    [
      'folders that import one way',
      {
        'tools/catalog.ts': "import { name } from './names.js';\nexport const catalog = [name];\n",
        'tools/names.ts': "export const name = 'shell';\n",
        'agents/run.ts': "import { catalog } from '../tools/catalog.js';\nexport const run = catalog;\n",
        'mcp/bridge.ts': "import { catalog } from '../tools/catalog.js';\nexport const bridge = catalog;\n",
      },
    ],
    [
      'the two engines standing on the shared contract in inference/',
      {
        'inference/parallel.ts': 'export const bytesPerSequence = 1;\n',
        'inference/engine.ts':
          "import { run } from './in-process/model.js';\nimport { start } from './server/model.js';\nexport const engine = [run, start];\n",
        'inference/in-process/model.ts': "import { bytesPerSequence } from '../parallel.js';\nexport const run = bytesPerSequence;\n",
        'inference/server/model.ts': "import { bytesPerSequence } from '../parallel.js';\nexport const start = bytesPerSequence;\n",
      },
    ],
  ])('passes %s', (_case, sources: Record<string, string>) => {
    expect(check(repository(sources)).status).toBe(0);
  });

  it('fails on two folders that import each other, though no two files do', () => {
    const output = refused({
      'tools/catalog.ts': "import { definition } from '../agents/definitions.js';\nexport const catalog = [definition];\n",
      'agents/definitions.ts': "export const definition = 'helper';\n",
      'agents/run.ts': "import { catalog } from '../tools/catalog.js';\nexport const run = catalog;\n",
    });
    expect(output).toContain('folder circle: ');
    expect(output).toContain('companion/src/tools/catalog.ts -> companion/src/agents/definitions.ts');
    expect(output).toContain('companion/src/agents/run.ts -> companion/src/tools/catalog.ts');
    expect(output).not.toContain('import circle:');
  });

  it('fails on a circle through three folders, and on a root file in one', () => {
    expect(
      refused({
        'agents/a.ts': "export { b } from '../mcp/b.js';\n",
        'mcp/b.ts': "export { c as b } from '../memory/c.js';\n",
        'memory/c.ts': "import type { A } from '../agents/types.js';\nexport const c = 1 as unknown as A;\n",
        'agents/types.ts': 'export type A = number;\n',
      }),
    ).toContain('folder circle: ');
    expect(
      refused({
        'services.ts': "export { run } from './agents/run.js';\n",
        'agents/run.ts': 'export const run = 1;\n',
        'agents/other.ts': "import type { run } from '../services.js';\nexport type Other = typeof run;\n",
      }),
    ).toContain('folder circle: ');
  });

  it('fails on one engine importing the other, either way, though no circle forms', () => {
    // The mistake it keeps out: server/model.ts took bytesPerSequence from the in-process engine's file.
    const output = refused({
      'inference/in-process/model.ts': 'export const bytesPerSequence = 1;\n',
      'inference/server/model.ts': "import { bytesPerSequence } from '../in-process/model.js';\nexport const start = bytesPerSequence;\n",
    });
    expect(output).toContain('engine import: companion/src/inference/server/model.ts -> companion/src/inference/in-process/model.ts');
    expect(output).not.toContain('circle');
    expect(
      refused({
        'inference/server/tool-syntax.ts': 'export const plainText = 1;\n',
        'inference/in-process/generate.ts': "import type { plainText } from '../server/tool-syntax.js';\nexport type Text = typeof plainText;\n",
      }),
    ).toContain('engine import: companion/src/inference/in-process/generate.ts');
  });

  it('fails on files that import each other', () => {
    const output = refused({
      'agents/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'agents/b.ts': "import { a } from './a.js';\nexport const b = a;\n",
    });
    expect(output).toContain('import circle: companion/src/agents/');
  });
});
