import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO_ROOT } from '../../helpers/hearth-process.js';

/** The pages people read: the README and every page under docs/, as paths relative to the repository. */
export function documentationPages(): string[] {
  const docs = readdirSync(join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs];
}

export function readPage(page: string): string {
  return readFileSync(join(REPO_ROOT, page), 'utf8');
}

export function repositoryPath(path: string): string {
  return relative(REPO_ROOT, path);
}

export interface CodeBlock {
  page: string;
  /** The info string after the opening fence (`sh`, `yaml`, or empty). */
  language: string;
  text: string;
  /** 1-based line of the block's first line of content. */
  line: number;
}

/** The fenced code blocks of a page. */
export function codeBlocks(page: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  let open: { language: string; line: number; lines: string[] } | undefined;
  for (const [index, text] of readPage(page).split('\n').entries()) {
    const fence = /^\s*```(.*)$/.exec(text);
    if (fence && !open) open = { language: fence[1]!.trim(), line: index + 2, lines: [] };
    else if (fence && open) {
      blocks.push({ page, language: open.language, text: open.lines.join('\n'), line: open.line });
      open = undefined;
    } else open?.lines.push(text);
  }
  return blocks;
}

export interface ShellCommand {
  words: string[];
  /** 1-based line of the page where the command starts. */
  line: number;
  /** The text from the command to the next one (its continuation lines and the comments after it). */
  text: string;
}

/**
 * The commands of a shell block, split into words the way sh would: single and double quotes
 * (a quoted word may span lines), backslash-newline continuations, `#` comments, and newlines or
 * `;` between commands. Nothing is expanded: `$(cat ~/.hearth/admin-token)` stays as written.
 */
export function shellCommands(block: CodeBlock): ShellCommand[] {
  const source = block.text;
  const found: { words: string[]; start: number }[] = [];
  let words: string[] = [];
  let word = '';
  let inWord = false;
  let start = 0;
  const endWord = () => {
    if (inWord) words.push(word);
    word = '';
    inWord = false;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) found.push({ words, start });
    words = [];
  };
  for (let index = 0; index < source.length; index++) {
    const char = source[index]!;
    if (!inWord && words.length === 0 && !/[\s#;]/.test(char)) start = index;
    if (char === "'" || char === '"') {
      const close = source.indexOf(char, index + 1);
      if (close < 0) throw new Error(`${block.page}:${block.line + lineOf(source, index)}: an unclosed ${char} quote`);
      word += source.slice(index + 1, close);
      inWord = true;
      index = close;
    } else if (char === '\\' && source[index + 1] === '\n') index++;
    else if (char === '#' && !inWord) {
      while (index + 1 < source.length && source[index + 1] !== '\n') index++;
    } else if (char === ' ' || char === '\t') endWord();
    else if (char === '\n' || char === ';') endCommand();
    else {
      word += char;
      inWord = true;
    }
  }
  endCommand();
  // Each command's text runs to the next command, so the comments after it (its documented answer) belong to it.
  return found.map((command, index) => ({
    words: command.words,
    line: block.line + lineOf(source, command.start),
    text: source.slice(command.start, found[index + 1]?.start ?? source.length),
  }));
}

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length - 1;
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The headings of a page outside code blocks, as [level, text, line]. */
export function headings(page: string): { level: number; text: string; line: number }[] {
  const found: { level: number; text: string; line: number }[] = [];
  let fenced = false;
  for (const [index, text] of readPage(page).split('\n').entries()) {
    if (/^\s*```/.test(text)) fenced = !fenced;
    const match = !fenced && /^(#{1,6}) (.+)$/.exec(text);
    if (match) found.push({ level: match[1]!.length, text: match[2]!, line: index + 1 });
  }
  return found;
}
