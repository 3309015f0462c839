/**
 * Writes a header-only GGUF v3 file (metadata keys, no tensors). Enough for anything that
 * reads metadata (node-llama-cpp's readGgufFileInfo), not for loading a model.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

export type GgufValue = string | number | bigint | boolean | string[];

const UINT8 = 0;
const UINT32 = 4;
const FLOAT32 = 6;
const BOOL = 7;
const STRING = 8;
const ARRAY = 9;
const UINT64 = 10;

/** A little-endian uint32, as GGUF writes it (for tests that build headers by hand). */
export function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value);
  return buffer;
}

/** A little-endian uint64, as GGUF writes it. */
export function u64(value: number | bigint): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64LE(BigInt(value));
  return buffer;
}

function string(text: string): Buffer {
  const bytes = Buffer.from(text, 'utf8');
  return Buffer.concat([u64(bytes.length), bytes]);
}

function value(item: GgufValue): Buffer {
  if (typeof item === 'string') return Buffer.concat([u32(STRING), string(item)]);
  if (typeof item === 'boolean') return Buffer.concat([u32(BOOL), Buffer.from([item ? 1 : 0])]);
  if (typeof item === 'bigint') return Buffer.concat([u32(UINT64), u64(item)]);
  if (Array.isArray(item)) return Buffer.concat([u32(ARRAY), u32(STRING), u64(item.length), ...item.map(string)]);
  if (Number.isInteger(item) && item >= 0 && item < 2 ** 32) return Buffer.concat([u32(UINT32), u32(item)]);
  const float = Buffer.alloc(4);
  float.writeFloatLE(item);
  return Buffer.concat([u32(FLOAT32), float]);
}

/** The bytes of a GGUF v3 header with these metadata keys and zero tensors. */
export function ggufHeader(metadata: Record<string, GgufValue>): Buffer {
  const entries = Object.entries(metadata);
  return Buffer.concat([
    Buffer.from('GGUF', 'ascii'),
    u32(3),
    u64(0), // tensor count
    u64(entries.length),
    ...entries.flatMap(([key, item]) => [string(key), value(item)]),
  ]);
}

/** A GGUF of `sizeBytes` bytes: this header, then `fill` (a byte, or random bytes when left out) standing in for tensor data. */
export function ggufFile(metadata: Record<string, GgufValue>, sizeBytes: number, fill?: number): Buffer {
  const header = ggufHeader(metadata);
  const rest = Math.max(0, sizeBytes - header.length);
  return Buffer.concat([header, fill === undefined ? randomBytes(rest) : Buffer.alloc(rest, fill)]);
}

/**
 * A 60-byte GGUF whose one key claims an array of `length` uint8 elements (default 2^40): the
 * elements are not there, and a reader that trusts the count loops over zeros past the end.
 */
export function ggufArrayBomb(length = 2n ** 40n): Buffer {
  const bytes = Buffer.concat([Buffer.from('GGUF', 'ascii'), u32(3), u64(0), u64(1), string('a'), u32(ARRAY), u32(UINT8), u64(length)]);
  return Buffer.concat([bytes, Buffer.alloc(60 - bytes.length)]);
}

/**
 * Writes the header to path (creating folders); `sizeBytes` pads the file with zeros so
 * tests can tell sizes apart.
 */
export async function writeGgufHeader(path: string, metadata: Record<string, GgufValue>, options: { sizeBytes?: number } = {}): Promise<string> {
  const header = ggufHeader(metadata);
  const size = Math.max(header.length, options.sizeBytes ?? 0);
  const bytes = Buffer.alloc(size);
  header.copy(bytes);
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, bytes);
  return path;
}

/** Metadata of a llama-architecture chat model with the given context length. */
export function chatMetadata(contextLength = 4096, name = 'test'): Record<string, GgufValue> {
  return {
    'general.architecture': 'llama',
    'general.name': name,
    'llama.context_length': contextLength,
    'llama.embedding_length': 64,
    'llama.block_count': 2,
    'tokenizer.ggml.model': 'llama',
    'tokenizer.chat_template': "{% for m in messages %}{{ m['content'] }}{% endfor %}",
  };
}

/** Metadata of a BERT-style embedding model. */
export function embeddingMetadata(architecture = 'nomic-bert', contextLength = 2048): Record<string, GgufValue> {
  return {
    'general.architecture': architecture,
    [`${architecture}.context_length`]: contextLength,
    [`${architecture}.embedding_length`]: 64,
    [`${architecture}.pooling_type`]: 1,
    'tokenizer.ggml.model': 'bert',
  };
}
