import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '$lib/markdown';

function dom(html: string): HTMLElement {
  const element = document.createElement('div');
  element.innerHTML = html;
  return element;
}

describe('renderMarkdown', () => {
  it('renders emphasis, lists and fenced code', () => {
    const element = dom(renderMarkdown('**bold** and `x`\n\n1. one\n2. two\n\n```ts\nconst a = 1 < 2;\n```'));
    expect(element.querySelector('strong')?.textContent).toBe('bold');
    expect([...element.querySelectorAll('ol li')].map((li) => li.textContent)).toEqual(['one', 'two']);
    expect(element.querySelector('pre code')?.textContent).toBe('const a = 1 < 2;\n');
  });

  it.each([
    '<img src=x onerror="alert(1)">',
    '<script>alert(1)</script>',
    '<iframe src="https://example.com"></iframe>',
    '<a href="#" onclick="alert(1)">x</a>',
    '<svg onload="alert(1)"></svg>',
  ])('shows raw HTML as text, never as elements: %s', (attack) => {
    const element = dom(renderMarkdown(`before ${attack} after`));
    expect(element.querySelectorAll('img, script, iframe, svg, [onerror], [onclick], [onload]')).toHaveLength(0);
    expect(element.textContent).toContain(attack);
  });

  it('drops javascript: links and turns images into plain links', () => {
    const element = dom(renderMarkdown('[x](javascript:alert(1)) ![cat](https://example.com/cat.png)'));
    const links = [...element.querySelectorAll('a')];
    expect(links.map((link) => link.getAttribute('href'))).toEqual([null, 'https://example.com/cat.png']);
    expect(element.querySelector('img')).toBeNull();
    expect(links[1]!.getAttribute('rel')).toContain('noopener');
    expect(links[1]!.getAttribute('target')).toBe('_blank');
  });
});

describe('renderReply', () => {
  it('splits top-level code blocks out of the Markdown, with their language', async () => {
    const { renderReply } = await import('$lib/markdown');
    const segments = renderReply('Intro [link][ref]\n\n```Python title\nprint(1 < 2)\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[ref]: https://example.org');
    expect(segments.map((segment) => segment.kind)).toEqual(['html', 'code', 'html']);
    expect(segments[1]).toEqual({ kind: 'code', code: 'print(1 < 2)', language: 'python' });
    // Reference links resolve across the split.
    expect(
      dom((segments[0] as { html: string }).html)
        .querySelector('a')
        ?.getAttribute('href'),
    ).toBe('https://example.org');
    expect(dom((segments[2] as { html: string }).html).querySelectorAll('table thead th')).toHaveLength(2);
  });

  it('keeps a language name only when it looks like one', async () => {
    const { renderReply } = await import('$lib/markdown');
    expect(renderReply('```"><script>\nx\n```')[0]).toEqual({ kind: 'code', code: 'x', language: '' });
  });
});

describe('highlight', () => {
  it('loads highlight.js on first use and escapes the code inside its spans', async () => {
    const { highlight } = await import('$lib/highlight');
    const html = await highlight('const a = "<b>";', 'javascript');
    expect(html).toContain('<span class="hljs-keyword">const</span>');
    expect(html).toContain('&lt;b&gt;');
    expect(await highlight('x', 'no-such-language')).toBeNull();
    expect(await highlight('x', '')).toBeNull();
  });
});
