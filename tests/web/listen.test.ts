import { describe, expect, it } from 'vitest';
import { listen } from '$lib/stores/listen';

describe('listen', () => {
  it('adds every listener, and the function it answers removes them all', () => {
    const page = new EventTarget();
    const media = new EventTarget();
    const heard: string[] = [];
    const stop = listen([page, 'storage', (event: Event) => heard.push(`page ${event.type}`)], [media, 'change', () => heard.push('media change')]);
    page.dispatchEvent(new Event('storage'));
    media.dispatchEvent(new Event('change'));
    media.dispatchEvent(new Event('other'));
    expect(heard).toEqual(['page storage', 'media change']);
    stop();
    page.dispatchEvent(new Event('storage'));
    media.dispatchEvent(new Event('change'));
    expect(heard).toEqual(['page storage', 'media change']);
  });
});
