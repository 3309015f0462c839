/**
 * Reads a GGUF header (metadata and tensor list) without trusting any of its counts or lengths.
 * node-llama-cpp's reader fills whatever lies past the end of a file with zeros and loops as long
 * as a count says: one 60-byte file asking for an array of 2^40 elements kept it busy, growing its
 * buffers, until the process died. Here every length is checked against the end of the file and
 * a cap on header bytes before a byte is read, counts against sane limits, and the walk stops
 * past a deadline. Memory stays at one chunk plus the scalar values kept, whatever the file says.
 */
import { open, type FileHandle } from 'node:fs/promises';

/** A header's metadata as dotted GGUF keys; arrays are null (present, not kept). */
export type GgufMetadata = Record<string, string | number | bigint | boolean | null>;

export interface GgufHeaderLimits {
  /** Bytes of header (metadata and tensor list) read at most. */
  maxHeaderBytes: number;
  /** Elements of one metadata array. */
  maxArrayLength: number;
  /** Metadata keys. */
  maxKeys: number;
  /** Entries of the tensor list. */
  maxTensors: number;
  /** Wall-clock time for the whole walk, in milliseconds. */
  timeoutMs: number;
}

export const GGUF_HEADER_LIMITS: GgufHeaderLimits = {
  // The largest published tokenizers (262,144 tokens; 400,000 merges) take about 12 MiB.
  maxHeaderBytes: 64 * 1024 * 1024,
  maxArrayLength: 16 * 1024 * 1024,
  maxKeys: 65_536,
  maxTensors: 65_536,
  timeoutMs: 30_000,
};

/** Why a file's header was refused, in words for the person who owns the file. */
export class GgufHeaderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GgufHeaderError';
  }
}

const CHUNK_BYTES = 1024 * 1024;
/** Longest key or tensor name accepted (llama.cpp's own limit for tensor names is 63 bytes). */
const MAX_NAME_BYTES = 1024;
/** ggml tensors have at most four dimensions. */
const MAX_DIMENSIONS = 4;
const STRING = 8;
const ARRAY = 9;

type Scalar = (view: Buffer) => number | bigint | boolean;
/** Each fixed-size GGUF type (uint8 ... float64): its size and how to read it. Strings and arrays are not here. */
const FIXED: Record<number, { size: number; read: Scalar }> = {
  0: { size: 1, read: (view) => view.readUInt8() },
  1: { size: 1, read: (view) => view.readInt8() },
  2: { size: 2, read: (view) => view.readUInt16LE() },
  3: { size: 2, read: (view) => view.readInt16LE() },
  4: { size: 4, read: (view) => view.readUInt32LE() },
  5: { size: 4, read: (view) => view.readInt32LE() },
  6: { size: 4, read: (view) => view.readFloatLE() },
  7: { size: 1, read: (view) => view.readUInt8() !== 0 },
  10: { size: 8, read: (view) => safe(view.readBigUInt64LE()) },
  11: { size: 8, read: (view) => safe(view.readBigInt64LE()) },
  12: { size: 8, read: (view) => view.readDoubleLE() },
};

/**
 * The metadata of the GGUF at `path` once its whole header (the tensor list too) has proved
 * sound; otherwise throws a GgufHeaderError that says what is wrong.
 */
export async function readGgufHeader(path: string, limits: GgufHeaderLimits = GGUF_HEADER_LIMITS): Promise<GgufMetadata> {
  const handle = await open(path, 'r');
  try {
    return await walk(new Cursor(handle, (await handle.stat()).size, limits));
  } finally {
    await handle.close();
  }
}

async function walk(cursor: Cursor): Promise<GgufMetadata> {
  const { limits } = cursor;
  if (cursor.size < 4 || (await cursor.bytes(4, 'the file')).toString('latin1') !== 'GGUF') {
    throw new GgufHeaderError('it is not a GGUF file (it does not begin with "GGUF")');
  }
  const version = await cursor.u32('the version');
  if (version === 1) throw new GgufHeaderError('it is a GGUF version 1 file, which llama.cpp no longer reads');
  if (version !== 2 && version !== 3) {
    const swapped = Buffer.alloc(4);
    swapped.writeUInt32BE(version);
    const bigEndian = swapped.readUInt32LE() === 2 || swapped.readUInt32LE() === 3;
    throw new GgufHeaderError(bigEndian ? 'it is a big-endian GGUF file, which this machine cannot use' : `it says GGUF version ${version}, which is unknown`);
  }
  const tensors = count(await cursor.u64('the tensor count'), limits.maxTensors, 'tensors');
  const keys = count(await cursor.u64('the key count'), limits.maxKeys, 'metadata keys');
  // No prototype: a key named "__proto__" is just a key.
  const metadata = Object.create(null) as GgufMetadata;
  for (let index = 0; index < keys; index++) {
    const key = await cursor.name(`the name of key ${index + 1}`);
    const type = await cursor.u32(`the type of "${key}"`);
    metadata[key] = await value(cursor, type, `"${key}"`);
  }
  for (let index = 0; index < tensors; index++) {
    const name = await cursor.name(`the name of tensor ${index + 1}`);
    const dimensions = await cursor.u32(`the dimension count of tensor "${name}"`);
    if (dimensions > MAX_DIMENSIONS)
      throw new GgufHeaderError(`tensor "${name}" says it has ${dimensions} dimensions; ggml tensors have at most ${MAX_DIMENSIONS}`);
    // Each dimension (uint64), then the tensor type (uint32) and its data offset (uint64).
    await cursor.skip(BigInt(dimensions * 8 + 4 + 8), `the entry of tensor "${name}"`);
  }
  return metadata;
}

async function value(cursor: Cursor, type: number, where: string): Promise<GgufMetadata[string]> {
  if (type === STRING) {
    const length = await cursor.u64(`the length of ${where}`);
    cursor.fits(length, `the text of ${where}`);
    return (await cursor.bytes(Number(length), `the text of ${where}`)).toString('utf8');
  }
  if (type !== ARRAY) {
    const fixed = fixedType(type, where);
    return fixed.read(await cursor.bytes(fixed.size, `the value of ${where}`));
  }
  const itemType = await cursor.u32(`the element type of ${where}`);
  if (itemType === ARRAY) throw new GgufHeaderError(`${where} is an array of arrays, which llama.cpp does not read`);
  const length = count(await cursor.u64(`the length of ${where}`), cursor.limits.maxArrayLength, `elements in ${where}`);
  if (itemType !== STRING) {
    await cursor.skip(BigInt(length) * BigInt(fixedType(itemType, `the elements of ${where}`).size), `the elements of ${where}`);
    return null;
  }
  await cursor.skipStrings(length, where);
  return null;
}

function fixedType(type: number, where: string): { size: number; read: Scalar } {
  const fixed = FIXED[type];
  if (fixed === undefined) throw new GgufHeaderError(`${where} has the value type ${type}, which GGUF does not define`);
  return fixed;
}

function count(found: bigint, limit: number, what: string): number {
  if (found > BigInt(limit)) throw new GgufHeaderError(`it says it has ${found} ${what}; Hearth reads at most ${limit}`);
  return Number(found);
}

function safe(value: bigint): number | bigint {
  return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** Reads forward through the file a chunk at a time, refusing to go past its end, the byte cap or the deadline. */
class Cursor {
  private offset = 0;
  private chunk = Buffer.alloc(0);
  private chunkStart = 0;
  private readonly deadline: number;

  constructor(
    private readonly handle: FileHandle,
    readonly size: number,
    readonly limits: GgufHeaderLimits,
  ) {
    this.deadline = Date.now() + limits.timeoutMs;
  }

  async u32(what: string): Promise<number> {
    return (await this.bytes(4, what)).readUInt32LE();
  }

  async u64(what: string): Promise<bigint> {
    return (await this.bytes(8, what)).readBigUInt64LE();
  }

  /** A key or tensor name, as later messages show it. */
  async name(what: string): Promise<string> {
    const length = await this.u64(`the length of ${what}`);
    if (length > BigInt(MAX_NAME_BYTES)) throw new GgufHeaderError(`${what} is ${length} bytes long; Hearth accepts names of at most ${MAX_NAME_BYTES}`);
    return (await this.bytes(Number(length), what)).toString('utf8');
  }

  /** Moves past `count` strings (each a uint64 length and its bytes): tokenizer lists hold hundreds of thousands. */
  async skipStrings(count: number, where: string): Promise<void> {
    for (let index = 0; index < count; index++) {
      const at = this.offset - this.chunkStart;
      // Straight from the chunk while it holds the length; only a refill waits.
      const length = at >= 0 && at + 8 <= this.chunk.length ? this.chunk.readBigUInt64LE(at) : null;
      if (length === null) {
        await this.skip(await this.u64(`the length of element ${index + 1} of ${where}`), `element ${index + 1} of ${where}`);
        continue;
      }
      this.offset += 8;
      if (BigInt(this.offset) + length > BigInt(Math.min(this.size, this.limits.maxHeaderBytes))) {
        await this.skip(length, `element ${index + 1} of ${where}`);
      }
      this.offset += Number(length);
    }
  }

  /** Moves past `length` bytes without reading them. */
  async skip(length: bigint, what: string): Promise<void> {
    this.fits(length, what);
    this.offset += Number(length);
  }

  async bytes(length: number, what: string): Promise<Buffer> {
    this.fits(BigInt(length), what);
    const end = this.offset + length;
    if (this.offset < this.chunkStart || end > this.chunkStart + this.chunk.length) await this.fill(length);
    const from = this.offset - this.chunkStart;
    this.offset = end;
    return this.chunk.subarray(from, from + length);
  }

  /** Throws unless `length` more bytes lie within both the file and the header cap. */
  fits(length: bigint, what: string): void {
    const end = BigInt(this.offset) + length;
    if (end > BigInt(this.size)) {
      throw new GgufHeaderError(`${what} (${length} bytes at byte ${this.offset}) passes the end of the file (${this.size} bytes)`);
    }
    if (end > BigInt(this.limits.maxHeaderBytes)) {
      throw new GgufHeaderError(`its header goes on past ${this.limits.maxHeaderBytes / 1024 / 1024} MiB, more than any model needs`);
    }
  }

  private async fill(length: number): Promise<void> {
    if (Date.now() > this.deadline) throw new GgufHeaderError(`reading its header took longer than ${this.limits.timeoutMs / 1000} s`);
    const want = Math.min(Math.max(length, CHUNK_BYTES), this.size - this.offset);
    const chunk = Buffer.alloc(want);
    const { bytesRead } = await this.handle.read(chunk, 0, want, this.offset);
    if (bytesRead < length) throw new GgufHeaderError(`the file ended early (${bytesRead} of ${length} bytes at byte ${this.offset})`);
    this.chunk = chunk.subarray(0, bytesRead);
    this.chunkStart = this.offset;
  }
}
