import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/hearth-process.js';
import { readPage } from './pages.js';

/*
 * The maps of the source stay complete: companion/README.md names every folder of companion/src
 * (a top-level folder in a row of its own, a sub-folder in its own row or in its top-level
 * folder's row) and every file at its root; web/README.md has a row for every screen (every
 * folder of web/src/routes with a +page.svelte) and names every folder of web/src/lib. A folder or
 * screen added without its line fails here, with the line to write.
 */

/** The rows of the first table under a page's `## <section>` heading, as [first cell, whole row]. */
function tableRows(page: string, section: string): { first: string; row: string }[] {
  const text = readPage(page);
  const start = text.indexOf(`\n## ${section}\n`);
  if (start < 0) throw new Error(`${page} has no "## ${section}" section`);
  const rows: { first: string; row: string }[] = [];
  let inTable = false;
  for (const line of text
    .slice(start + 1)
    .split('\n')
    .slice(1)) {
    if (line.startsWith('## ')) break;
    if (line.startsWith('|')) {
      inTable = true;
      if (/^\|[-| ]+\|$/.test(line)) continue;
      rows.push({ first: line.split(' | ')[0]!.replace(/^\|\s*/, ''), row: line });
    } else if (inTable) break;
  }
  return rows.slice(1);
}

/** Folders under `root`, as paths relative to it (`images`, `images/sd`), at every depth. */
function folders(root: string, under = ''): string[] {
  return readdirSync(join(root, under), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = under ? `${under}/${entry.name}` : entry.name;
      return [path, ...folders(root, path)];
    });
}

const named = (text: string, name: string) => text.includes(`\`${name}\``);

const MAP_SECTION = 'Where things are';

describe('companion/README.md', () => {
  const SOURCE = join(REPO_ROOT, 'companion', 'src');

  it('has a row for every folder of companion/src, and names each sub-folder', () => {
    const table = tableRows('companion/README.md', MAP_SECTION);
    expect(table.length).toBeGreaterThan(10);
    const problems: string[] = [];
    for (const folder of folders(SOURCE)) {
      const [top, ...rest] = folder.split('/');
      const own = table.find((entry) => named(entry.first, `${folder}/`));
      if (rest.length === 0) {
        if (!own) problems.push(`companion/README.md has no row for companion/src/${folder}/. Add: | \`${folder}/\` | <what it holds> |`);
        continue;
      }
      const parent = table.find((entry) => named(entry.first, `${top}/`));
      const mentioned = parent && (named(parent.row, `${rest.join('/')}/`) || named(parent.row, `${rest.at(-1)}/`) || named(parent.row, `${folder}/`));
      if (!own && !mentioned)
        problems.push(
          `companion/README.md names companion/src/${folder}/ nowhere: say what \`${rest.join('/')}/\` holds in the row of \`${top}/\`, or give it a row.`,
        );
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('names every file at the root of companion/src', () => {
    const table = tableRows('companion/README.md', MAP_SECTION);
    const files = readdirSync(SOURCE).filter((name) => name.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(5);
    const problems = files
      .filter((file) => !table.some((entry) => named(entry.first, file)))
      .map((file) => `companion/README.md has no row naming companion/src/${file}. Add: | \`${file}\` | <what it does> |`);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('traces a chat completion, a memory ingest and search, an agent run, an image job and a remote run through files that exist', () => {
    const text = readPage('companion/README.md');
    const traces = text.slice(text.indexOf('\n## Requests, traced\n'));
    for (const title of ['A chat completion', 'A memory ingest, then a search', 'An agent run', 'An image job', 'A remote run'])
      expect(traces, `companion/README.md traces "${title}"`).toContain(`**${title}`);
    // Every source file a trace names exists: under companion/src, or where its own folder says.
    const missing = [...traces.matchAll(/`((?:[a-z-]+\/)*[a-z-]+\.(?:ts|mjs))`/g)]
      .map((match) => match[1]!)
      .filter((file) => !existsSync(join(SOURCE, file)) && !folders(SOURCE).some((folder) => existsSync(join(SOURCE, folder, file))))
      .filter((file) => !existsSync(join(REPO_ROOT, file)));
    expect([...new Set(missing)], 'files the traces name that do not exist').toEqual([]);
  });
});

describe('web/README.md', () => {
  const ROUTES = join(REPO_ROOT, 'web', 'src', 'routes');
  const LIB = join(REPO_ROOT, 'web', 'src', 'lib');

  it('has a row for every screen (every page under web/src/routes), with its page file', () => {
    const table = tableRows('web/README.md', 'Screens');
    const pages = ['', ...folders(ROUTES)].filter((folder) => existsSync(join(ROUTES, folder, '+page.svelte')));
    expect(pages.length).toBeGreaterThan(5);
    const problems: string[] = [];
    for (const folder of pages) {
      const path = `/${folder}`;
      const file = `routes/${folder ? `${folder}/` : ''}+page.svelte`;
      const row = table.find((entry) => entry.row.split(' | ')[1]?.startsWith(`\`${path}\``));
      if (!row)
        problems.push(
          `web/README.md's Screens table has no row for ${path}. Add: | <screen> | \`${path}\` (\`${file}\`) | <stores and API> | <what it shows> |`,
        );
      else if (!named(row.row, file)) problems.push(`web/README.md's row for ${path} does not name its page, ${file}`);
    }
    for (const entry of table) {
      const path = /^`([^`]+)`/.exec(entry.row.split(' | ')[1] ?? '')?.[1];
      if (path && !pages.includes(path.slice(1))) problems.push(`web/README.md's Screens table has a row for ${path}, which is no page under web/src/routes`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('names every folder of web/src/lib in its layout table', () => {
    const table = tableRows('web/README.md', 'Layout');
    const problems = folders(LIB)
      .filter((folder) => {
        const [top, ...rest] = folder.split('/');
        const row = table.find((entry) => named(entry.first, `src/lib/${top}/`));
        return !row || (rest.length > 0 && !named(row.row, `${rest.join('/')}/`));
      })
      .map((folder) => `web/README.md's Layout table does not name src/lib/${folder}/`);
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
