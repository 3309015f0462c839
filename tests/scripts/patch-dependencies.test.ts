import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { patchDependencies } from '../../scripts/patch-dependencies.mjs';

const original = 'export function speed() {\n  const steps = [];\n  return steps.length;\n}\n';
const patch = `--- a/index.js
+++ b/index.js
@@ -1,4 +1,5 @@
 export function speed() {
   const steps = [];
+  steps.push('one pass');
   return steps.length;
 }
`;

function project(version = '1.0.0', text = original) {
  const root = mkdtempSync(join(tmpdir(), 'hearth-patch-'));
  mkdirSync(join(root, 'patches'));
  mkdirSync(join(root, 'node_modules', 'demo'), { recursive: true });
  writeFileSync(join(root, 'patches', 'demo+1.0.0.patch'), patch);
  writeFileSync(join(root, 'node_modules', 'demo', 'package.json'), JSON.stringify({ name: 'demo', version }));
  writeFileSync(join(root, 'node_modules', 'demo', 'index.js'), text);
  return root;
}

const quiet = { warn: () => {}, error: () => {} };
const installed = (root: string) => readFileSync(join(root, 'node_modules', 'demo', 'index.js'), 'utf8');

describe('patch-dependencies', () => {
  it('applies a unified diff to the installed package, once however often it runs', () => {
    const root = project();
    expect(patchDependencies(root, { checkOnly: true, log: quiet })).toBe(1);
    expect(patchDependencies(root, { log: quiet })).toBe(0);
    const patched = installed(root);
    expect(patched).toContain("steps.push('one pass');");
    expect(patchDependencies(root, { log: quiet })).toBe(0);
    expect(installed(root)).toBe(patched);
    expect(patchDependencies(root, { checkOnly: true, log: quiet })).toBe(0);
  });

  it('leaves another version of the package alone and says so', () => {
    const root = project('1.0.1');
    const warnings: string[] = [];
    expect(patchDependencies(root, { log: { ...quiet, warn: (line: string) => warnings.push(line) } })).toBe(1);
    expect(installed(root)).toBe(original);
    expect(warnings.join('\n')).toMatch(/for demo 1\.0\.0, but 1\.0\.1 is installed/);
  });

  it('refuses a file the hunk no longer matches', () => {
    const root = project('1.0.0', original.replace('steps = []', 'steps = [0]'));
    const errors: string[] = [];
    expect(patchDependencies(root, { log: { ...quiet, error: (line: string) => errors.push(line) } })).toBe(1);
    expect(errors.join('\n')).toMatch(/index\.js: hunk 1 does not match/);
  });

  it('has node-llama-cpp patched in this checkout', () => {
    expect(patchDependencies(join(import.meta.dirname, '..', '..'), { checkOnly: true, log: quiet })).toBe(0);
  });
});
