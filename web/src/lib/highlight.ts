/**
 * Syntax highlighting with highlight.js (its core and ~36 common languages), loaded on the
 * first code block: a chunk of the app's own, precached by the service worker, so it works
 * offline. Its output is the code escaped as text, wrapped in `<span class="hljs-…">`.
 */
import type { HLJSApi } from 'highlight.js';

let loading: Promise<HLJSApi> | null = null;

export function loadHighlighter(): Promise<HLJSApi> {
  loading ??= import('highlight.js/lib/common').then((module) => module.default);
  loading.catch(() => (loading = null));
  return loading;
}

/** Highlighted HTML for `code`, or null when the language is not one highlight.js knows. */
export async function highlight(code: string, language: string): Promise<string | null> {
  if (!language) return null;
  const hljs = await loadHighlighter();
  if (!hljs.getLanguage(language)) return null;
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}
