/**
 * Model replies as safe Markdown. Raw HTML in a reply is shown as text, never parsed;
 * images are shown as links (no request leaves the app because a model wrote a URL);
 * DOMPurify then removes anything executable that might remain.
 */
import DOMPurify from 'dompurify';
import { Marked, type Token, type Tokens, type TokensList } from 'marked';

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    image({ href, text }: Tokens.Image) {
      return `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`;
    },
  },
});

let hooked = false;

function purifier() {
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
    });
    hooked = true;
  }
  return DOMPurify;
}

/** HTML for a reply, safe to insert with {@html}. */
export function renderMarkdown(source: string): string {
  return sanitize(marked.parse(source) as string);
}

/** A reply in pieces: Markdown as safe HTML, and top-level code blocks for the code block component. */
export type ReplySegment = { kind: 'html'; html: string } | { kind: 'code'; code: string; language: string };

/**
 * The reply split at its top-level fenced or indented code blocks, which the app shows with a
 * language label, a copy button and syntax highlighting; everything else is rendered HTML.
 */
export function renderReply(source: string): ReplySegment[] {
  const tokens = marked.lexer(source);
  const segments: ReplySegment[] = [];
  let run: Token[] = [];
  const flush = () => {
    if (run.length === 0) return;
    const list = Object.assign(run, { links: tokens.links }) as TokensList;
    segments.push({ kind: 'html', html: sanitize(marked.parser(list) as string) });
    run = [];
  };
  for (const token of tokens) {
    if (token.type === 'code') {
      flush();
      const code = token as Tokens.Code;
      const language = (code.lang ?? '').trim().split(/\s+/)[0]!.toLowerCase();
      segments.push({ kind: 'code', code: code.text, language: /^[a-z0-9+#._-]{1,24}$/.test(language) ? language : '' });
    } else run.push(token);
  }
  flush();
  return segments;
}

function sanitize(html: string): string {
  return purifier().sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ['img', 'style', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed', 'svg', 'math'],
    FORBID_ATTR: ['style', 'class', 'id'],
    ALLOWED_URI_REGEXP: /^(?:https?:|mailto:|#)/i,
  });
}
