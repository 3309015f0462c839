// Fails when two files of companion/src import each other in a circle, directly or through others.
// (Which folders may import what is ESLint's job: see eslint.config.js.) Usage: node scripts/check-imports.js
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'companion/src');

function filesUnder(folder) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return filesUnder(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Relative imports of a file, resolved to .ts paths (type-only imports count too: they still couple the files). */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const found = new Set();
  for (const match of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g)) {
    const target = resolve(dirname(file), match[1] ?? match[2]).replace(/\.js$/, '.ts');
    if (existsSync(target)) found.add(target);
  }
  return found;
}

const files = filesUnder(source);
const edges = new Map(files.map((file) => [file, importsOf(file)]));

// Tarjan's strongly connected components: every component of more than one file is a circle.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const circles = [];
function visit(file) {
  index.set(file, counter);
  low.set(file, counter++);
  stack.push(file);
  onStack.add(file);
  for (const next of edges.get(file) ?? []) {
    if (!index.has(next)) {
      visit(next);
      low.set(file, Math.min(low.get(file), low.get(next)));
    } else if (onStack.has(next)) low.set(file, Math.min(low.get(file), index.get(next)));
  }
  if (low.get(file) !== index.get(file)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    onStack.delete(member);
    component.push(member);
  } while (member !== file);
  if (component.length > 1) circles.push(component);
}
for (const file of files) if (!index.has(file)) visit(file);

for (const circle of circles) console.error(`import circle: ${circle.map((file) => relative(root, file)).join(' <-> ')}`);
if (circles.length > 0) process.exit(1);
console.log(`imports: ${files.length} files in companion/src, no circles`);
