import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../helpers/hearth-process.js';
import { anchorOf, documentationPages, headings, readPage } from './pages.js';

/*
 * The README is a short first screen with a contents list; the reference lives in docs/. These
 * pages link to each other, often to a heading: every relative link must lead to a file that
 * exists and, with a #fragment, to a heading of that page. The README's picture must exist and
 * stay small.
 */

const PAGES = [...documentationPages(), 'companion/README.md', 'web/README.md'];

interface Link {
  page: string;
  line: number;
  target: string;
}

/** The Markdown links and images of a page, outside code blocks and code spans. */
function links(page: string): Link[] {
  const found: Link[] = [];
  let fenced = false;
  for (const [index, text] of readPage(page).split('\n').entries()) {
    if (/^\s*```/.test(text)) fenced = !fenced;
    if (fenced) continue;
    for (const match of text.replace(/`[^`]*`/g, '').matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      found.push({ page, line: index + 1, target: match[1]! });
  }
  return found;
}

function problem(link: Link): string | undefined {
  if (/^[a-z]+:/i.test(link.target)) return undefined;
  const [path, fragment] = link.target.split('#') as [string, string | undefined];
  const file = path === '' ? link.page : normalize(join(dirname(link.page), path));
  if (file.startsWith('..')) return `${link.page}:${link.line}: ${link.target} leads outside the repository`;
  if (!existsSync(join(REPO_ROOT, file))) return `${link.page}:${link.line}: ${link.target} names ${file}, which does not exist`;
  if (fragment === undefined) return undefined;
  if (!file.endsWith('.md')) return `${link.page}:${link.line}: ${link.target} has a #fragment on a file that is not a page`;
  const anchors = headings(file).map((heading) => anchorOf(heading.text));
  if (!anchors.includes(fragment))
    return `${link.page}:${link.line}: ${link.target}: ${file} has no heading with the anchor #${fragment} (it has: ${anchors.join(', ')})`;
  return undefined;
}

describe('links between the pages', () => {
  it('are found (so the check below sees them)', () => {
    const all = PAGES.flatMap(links);
    expect(all.length).toBeGreaterThan(40);
    expect(all.some((link) => link.target.includes('#'))).toBe(true);
  });

  it('each leads to a file that exists, and to a heading of it', () => {
    const problems = PAGES.flatMap(links)
      .map(problem)
      .filter((text) => text !== undefined);
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('the README links every page of docs/', () => {
    const linked = new Set(links('README.md').map((link) => normalize(link.target.split('#')[0]!)));
    const missing = documentationPages()
      .filter((page) => page !== 'README.md' && !linked.has(page))
      .map((page) => `README.md does not link ${page}: add it to the contents`);
    expect(missing, missing.join('\n')).toEqual([]);
  });
});

describe('the pictures of the pages', () => {
  it('are each used by a page, and under 200 KB', () => {
    const folder = join(REPO_ROOT, 'docs', 'images');
    const used = new Set(PAGES.flatMap(links).map((link) => normalize(join(dirname(link.page), link.target.split('#')[0]!))));
    const problems: string[] = [];
    for (const name of readdirSync(folder)) {
      const file = `docs/images/${name}`;
      if (!used.has(file)) problems.push(`${file} is used by no page`);
      const size = statSync(join(folder, name)).size;
      if (size > 200 * 1024) problems.push(`${file} is ${Math.round(size / 1024)} KB; keep it under 200 KB (a palette PNG, JPEG or WebP)`);
    }
    expect(readdirSync(folder).length).toBeGreaterThan(0);
    expect(problems, problems.join('\n')).toEqual([]);
  });
});
