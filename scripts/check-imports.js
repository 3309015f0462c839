// Fails when two files of companion/src import each other in a circle, directly or through others,
// and when two top-level parts of companion/src (its folders, and its root files) do: a folder may
// use another only if that one never comes back to it, so each folder can be read and changed on
// its own; and when one of the two local engines (companion/src/inference/in-process/ and
// inference/server/) imports the other's folder: both stand on the shared contract in inference/,
// so either can change without the other. (Which folders may import what is ESLint's job: see
// eslint.config.js.)
// Usage: node scripts/check-imports.js [repository root, default: this one]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = process.argv[2] ? resolve(process.argv[2]) : resolve(dirname(fileURLToPath(import.meta.url)), '..');
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

/** Tarjan's strongly connected components of a graph: every component of more than one node is a circle. */
function circlesOf(graph) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const circles = [];
  function visit(node) {
    index.set(node, counter);
    low.set(node, counter++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node), low.get(next)));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node), index.get(next)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) circles.push(component);
  }
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return circles;
}

/** The top-level part of companion/src a file belongs to: its folder (`agents/`), or itself for a root file (`app.ts`). */
function partOf(file) {
  const [first, ...rest] = relative(source, file).split(sep);
  return rest.length > 0 ? `${first}/` : first;
}

/** The imports between top-level parts, each edge with one file import that makes it (for the message). */
function partGraph() {
  const graph = new Map();
  const because = new Map();
  for (const [file, targets] of edges) {
    const from = partOf(file);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const target of targets) {
      const to = partOf(target);
      if (to === from) continue;
      graph.get(from).add(to);
      if (!because.has(`${from} ${to}`)) because.set(`${from} ${to}`, `${relative(root, file)} -> ${relative(root, target)}`);
    }
  }
  return { graph, because };
}

/** Folders of companion/src that stand side by side: none of them imports another. */
const SIBLINGS = ['inference/in-process', 'inference/server'];

/** The sibling folder a file lies in, if any. */
function siblingOf(file) {
  const path = relative(source, file).split(sep).join('/');
  return SIBLINGS.find((folder) => path.startsWith(`${folder}/`));
}

/** Imports from one sibling folder into another, as `from -> to` lines. */
function siblingImports() {
  const found = [];
  for (const [file, targets] of edges) {
    const from = siblingOf(file);
    if (!from) continue;
    for (const target of targets) {
      const to = siblingOf(target);
      if (to && to !== from) found.push(`${relative(root, file)} -> ${relative(root, target)}`);
    }
  }
  return found;
}

const circles = circlesOf(edges);
for (const circle of circles) console.error(`import circle: ${circle.map((file) => relative(root, file)).join(' <-> ')}`);
const parts = partGraph();
const folderCircles = circlesOf(parts.graph);
for (const circle of folderCircles) {
  const members = new Set(circle);
  const links = [...parts.because].filter(([edge]) => edge.split(' ').every((part) => members.has(part))).map(([, example]) => `  ${example}`);
  console.error(`folder circle: ${circle.join(' <-> ')}, through:\n${links.join('\n')}`);
}
const crossings = siblingImports();
for (const crossing of crossings) console.error(`engine import: ${crossing} (the engines share only what lies in inference/ itself)`);
if (circles.length > 0 || folderCircles.length > 0 || crossings.length > 0) process.exit(1);
console.log(
  `imports: ${files.length} files in companion/src, no circles between files or between its ${parts.graph.size} top-level parts, neither engine imports the other`,
);
