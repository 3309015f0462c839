import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bytesToUnicode, ClipTokenizer } from '../../../companion/src/images/sd/clip-tokenizer.js';
import { clipVocabulary, writeTinyStableDiffusion } from '../../../scripts/onnx/tiny-sd.js';

const folder = join(writeTinyStableDiffusion(mkdtempSync(join(tmpdir(), 'hearth-tok-'))), 'tokenizer');
const tokenizer = ClipTokenizer.load(folder);
const { vocab } = clipVocabulary();

describe('CLIP byte-level BPE tokenizer', () => {
  it('maps all 256 bytes to distinct printable characters, as GPT-2/CLIP do', () => {
    const symbols = bytesToUnicode();
    expect(new Set(symbols.values()).size).toBe(256);
    expect(symbols.get(0x41)).toBe('A');
    expect(symbols.get(0x20)).toBe('Ġ'); // space -> U+0120
    expect(symbols.get(0x0a)).toBe('Ċ');
  });

  it('merges known words into single end-of-word tokens, lower-cased and whitespace-cleaned', () => {
    expect(tokenizer.tokens('A  Photo of\tthe CAT')).toEqual(['a</w>', 'photo</w>', 'of</w>', 'the</w>', 'cat</w>']);
  });

  it('splits unknown words into the merges it has, down to byte symbols', () => {
    // "cats": c-a-t merge as far as "cat" allows only at the end of a word, so "ca" + "t" + "s</w>".
    expect(tokenizer.tokens('cats')).toEqual(['ca', 't', 's</w>']);
    // Punctuation and non-ASCII text become byte symbols: é is two UTF-8 bytes.
    expect(tokenizer.tokens('café!')).toEqual(['ca', 'f', 'Ã', '©</w>', '!</w>']);
    // "'s" is its own piece (CLIP's pattern); digits are split one by one.
    expect(tokenizer.tokens("it's 42")).toEqual(['i', 't</w>', "'", 's</w>', '4</w>', '2</w>']);
  });

  it('frames ids with start and end tokens and pads to model_max_length', () => {
    const ids = [...tokenizer.encode('a red house')];
    expect(ids).toHaveLength(16);
    expect(ids.slice(0, 5)).toEqual([vocab['<|startoftext|>'], vocab['a</w>'], vocab['red</w>'], vocab['house</w>'], vocab['<|endoftext|>']]);
    expect(ids.slice(5).every((id) => id === vocab['<|endoftext|>'])).toBe(true);
  });

  it('cuts a long prompt to the context and says so', () => {
    const long = Array.from({ length: 40 }, () => 'fire').join(' ');
    const ids = tokenizer.encode(long);
    expect(ids[0]).toBe(vocab['<|startoftext|>']);
    expect(ids[15]).toBe(vocab['<|endoftext|>']);
    expect(tokenizer.truncated(long)).toBe(true);
    expect(tokenizer.truncated('fire')).toBe(false);
  });
});
