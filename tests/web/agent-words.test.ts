import { describe, expect, it } from 'vitest';
import { argumentFields, policySentence, toolLabel } from '$lib/components/agents/words';

describe("agents' settings and tools in words", () => {
  it('names a tool in words', () => {
    expect(toolLabel('write_file')).toBe('Write file');
    expect(toolLabel('notes_searchNotes')).toBe('Notes search notes');
    expect(toolLabel('web-fetch')).toBe('Web fetch');
  });

  it('says the tool policy in sentences, not setting names', () => {
    const text = policySentence({ read: 'auto', write: 'ask', exec: 'deny', network: 'ask' });
    expect(text).toBe('Reads on its own, asks before changing files, never runs commands, asks before going online');
    expect(text).not.toMatch(/auto|deny|exec|:/);
  });

  it('shows arguments as labelled fields, a long or multi-line value folded, and anything else as it is', () => {
    const long = 'x'.repeat(500);
    expect(argumentFields(JSON.stringify({ path: 'note.txt', content: long, lines: { from: 1 } }))).toEqual([
      { label: 'Path', text: 'note.txt', long: false },
      { label: 'Content', text: long, long: true },
      { label: 'Lines', text: '{\n  "from": 1\n}', long: true },
    ]);
    expect(argumentFields('[1, 2]')).toBeNull();
    expect(argumentFields('not json')).toBeNull();
  });
});
