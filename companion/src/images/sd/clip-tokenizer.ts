/**
 * CLIP's byte-level BPE tokenizer, read from a model folder's tokenizer/vocab.json and
 * merges.txt (the files of Hugging Face's CLIPTokenizer): lower-cased, whitespace-cleaned text
 * is split by CLIP's pattern, each piece's UTF-8 bytes are mapped to printable symbols, merged
 * by rank, and framed as <|startoftext|> ... <|endoftext|>, padded to model_max_length.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const START = '<|startoftext|>';
const END = '<|endoftext|>';
const PATTERN = /<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+/giu;

let byteSymbols: Map<number, string> | undefined;

/** GPT-2/CLIP's reversible map from the 256 byte values to printable characters. */
export function bytesToUnicode(): Map<number, string> {
  if (byteSymbols) return byteSymbols;
  const printable: number[] = [];
  for (const [from, to] of [
    [0x21, 0x7e],
    [0xa1, 0xac],
    [0xae, 0xff],
  ] as const)
    for (let code = from; code <= to; code++) printable.push(code);
  const map = new Map<number, string>();
  let extra = 0;
  for (let byte = 0; byte < 256; byte++) {
    map.set(byte, String.fromCharCode(printable.includes(byte) ? byte : 256 + extra++));
  }
  byteSymbols = map;
  return map;
}

export interface TokenizerFiles {
  vocab: Record<string, number>;
  merges: string[];
  maxLength: number;
  padToken?: string;
}

export class ClipTokenizer {
  private readonly ranks = new Map<string, number>();
  private readonly cache = new Map<string, string[]>();
  readonly maxLength: number;
  readonly startId: number;
  readonly endId: number;
  readonly padId: number;

  constructor(private readonly files: TokenizerFiles) {
    files.merges.forEach((line, rank) => this.ranks.set(line, rank));
    this.maxLength = files.maxLength;
    this.startId = this.idOf(START);
    this.endId = this.idOf(END);
    this.padId = files.padToken !== undefined && files.padToken in files.vocab ? files.vocab[files.padToken]! : this.endId;
  }

  /** Reads tokenizer/vocab.json, merges.txt and (optionally) tokenizer_config.json. */
  static load(folder: string): ClipTokenizer {
    const vocab = JSON.parse(readFileSync(join(folder, 'vocab.json'), 'utf8')) as Record<string, number>;
    const merges = readFileSync(join(folder, 'merges.txt'), 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#version'));
    const configPath = join(folder, 'tokenizer_config.json');
    const config = existsSync(configPath) ? (JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>) : {};
    const declared = Number(config.model_max_length);
    // Tokenizers saved without a real limit store a huge sentinel; CLIP's context is 77.
    const maxLength = Number.isInteger(declared) && declared > 2 && declared <= 4096 ? declared : 77;
    const pad = config.pad_token;
    const padToken =
      typeof pad === 'string' ? pad : typeof (pad as { content?: unknown })?.content === 'string' ? (pad as { content: string }).content : undefined;
    return new ClipTokenizer({ vocab, merges, maxLength, padToken });
  }

  /** Token strings of a text, without the framing tokens. */
  tokens(text: string): string[] {
    const symbols = bytesToUnicode();
    const encoder = new TextEncoder();
    const cleaned = text.normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();
    const out: string[] = [];
    for (const match of cleaned.matchAll(PATTERN)) {
      const piece = match[0];
      if (piece === START || piece === END) {
        out.push(piece);
        continue;
      }
      const mapped = Array.from(encoder.encode(piece), (byte) => symbols.get(byte)!).join('');
      out.push(...this.bpe(mapped));
    }
    return out;
  }

  /** Ids framed by start and end tokens, cut and padded to maxLength (CLIP's fixed context). */
  encode(text: string): Int32Array {
    const ids = this.tokens(text).map((token) => this.files.vocab[token] ?? this.endId);
    const body = ids.slice(0, this.maxLength - 2);
    const framed = [this.startId, ...body, this.endId];
    const result = new Int32Array(this.maxLength).fill(this.padId);
    result.set(framed);
    return result;
  }

  /** Whether the text was longer than the context and got cut. */
  truncated(text: string): boolean {
    return this.tokens(text).length > this.maxLength - 2;
  }

  private idOf(token: string): number {
    const id = this.files.vocab[token];
    if (id === undefined) throw new Error(`The tokenizer vocabulary has no ${token} token.`);
    return id;
  }

  /** Merges a word's symbols by rank, the lowest-ranked adjacent pair first, until none applies. */
  private bpe(word: string): string[] {
    const cached = this.cache.get(word);
    if (cached) return cached;
    const pieces = [...word];
    pieces[pieces.length - 1] += '</w>';
    for (;;) {
      let best = -1;
      let bestRank = Infinity;
      for (let index = 0; index < pieces.length - 1; index++) {
        const rank = this.ranks.get(`${pieces[index]} ${pieces[index + 1]}`);
        if (rank !== undefined && rank < bestRank) {
          bestRank = rank;
          best = index;
        }
      }
      if (best < 0) break;
      const [left, right] = [pieces[best]!, pieces[best + 1]!];
      // Merge every occurrence of this pair, left to right, as the reference implementation does.
      for (let index = 0; index < pieces.length - 1; index++) {
        if (pieces[index] === left && pieces[index + 1] === right) pieces.splice(index, 2, left + right);
      }
    }
    if (this.cache.size < 10_000) this.cache.set(word, pieces);
    return pieces;
  }
}
