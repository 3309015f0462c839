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
