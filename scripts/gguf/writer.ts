/**
 * The GGUF container: metadata values, tensors (f32) and the file layout, shared by the tiny model
 * and projector generators. Every tensor is f32 and filled from a seeded random source, so the same
 * seed writes the same bytes on every platform.
 */
import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';

export type MetadataValue =
  { string: string } | { uint32: number } | { float32: number } | { bool: boolean } | { strings: string[] } | { float32s: number[] } | { int32s: number[] };

export type Metadata = Record<string, MetadataValue>;

const ggufType = { uint32: 4, int32: 5, float32: 6, bool: 7, string: 8, array: 9 } as const;

export const alignment = 32;

function uint32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32LE(value);
  return buffer;
}

function uint64(value: number): Buffer {
  const buffer = Buffer.alloc(8);
  buffer.writeBigUInt64LE(BigInt(value));
  return buffer;
}

function int32s(values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => buffer.writeInt32LE(value, index * 4));
  return buffer;
}

function float32s(values: number[]): Buffer {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, index) => buffer.writeFloatLE(value, index * 4));
  return buffer;
}

function string(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  return Buffer.concat([uint64(bytes.length), bytes]);
}

function array(type: number, count: number, body: Buffer[]): Buffer {
  return Buffer.concat([uint32(ggufType.array), uint32(type), uint64(count), ...body]);
}

function encodeValue(value: MetadataValue): Buffer {
  if ('string' in value) return Buffer.concat([uint32(ggufType.string), string(value.string)]);
  if ('uint32' in value) return Buffer.concat([uint32(ggufType.uint32), uint32(value.uint32)]);
  if ('float32' in value) return Buffer.concat([uint32(ggufType.float32), float32s([value.float32])]);
  if ('bool' in value) return Buffer.concat([uint32(ggufType.bool), Buffer.from([value.bool ? 1 : 0])]);
  if ('strings' in value) return array(ggufType.string, value.strings.length, value.strings.map(string));
  if ('float32s' in value) return array(ggufType.float32, value.float32s.length, [float32s(value.float32s)]);
  return array(ggufType.int32, value.int32s.length, [int32s(value.int32s)]);
}

export type Random = () => number;

/** mulberry32: uniform in [-1, 1), integer arithmetic only so every platform agrees. */
export function createRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 2 ** 31 - 1;
  };
}

export interface Tensor {
  name: string;
  /** ggml order: dims[0] is the contiguous (input) dimension, dims[1] counts rows, and so on. */
  dims: number[];
  fill(values: Float32Array, random: Random): void;
}

export const ones = (values: Float32Array) => values.fill(1);
export const zeros = (values: Float32Array) => values.fill(0);

export function fillUniform(values: Float32Array, random: Random, scale: number) {
  for (let index = 0; index < values.length; index++) values[index] = random() * scale;
}

/** Variance 1/fan-in keeps activations near unit scale; `quietRow` (an output dimension) stays zero. */
export function matrix(name: string, columns: number, rows: number, quietRow?: number): Tensor {
  return {
    name,
    dims: [columns, rows],
    fill: (values, random) => {
      fillUniform(values, random, Math.sqrt(3 / columns));
      if (quietRow !== undefined) values.fill(0, quietRow * columns, (quietRow + 1) * columns);
    },
  };
}

const alignUp = (offset: number) => Math.ceil(offset / alignment) * alignment;
const elementCount = (tensor: Tensor) => tensor.dims.reduce((product, dim) => product * dim, 1);

export interface Layout {
  header: Buffer;
  /** Offsets are relative to the start of the tensor data, which follows the padded header. */
  placed: { tensor: Tensor; offset: number }[];
  bytes: number;
}

/** The file's header and where each tensor's data goes (`general.alignment` must be `alignment`). */
export function layoutFile(metadata: Metadata, tensors: Tensor[]): Layout {
  let dataBytes = 0;
  const placed = tensors.map((tensor) => {
    const offset = alignUp(dataBytes);
    dataBytes = offset + elementCount(tensor) * 4;
    return { tensor, offset };
  });
  const entries = Object.entries(metadata);
  const header = Buffer.concat([
    Buffer.from('GGUF', 'latin1'),
    uint32(3),
    uint64(placed.length),
    uint64(entries.length),
    ...entries.map(([key, value]) => Buffer.concat([string(key), encodeValue(value)])),
    ...placed.map(({ tensor, offset }) =>
      Buffer.concat([
        string(tensor.name),
        uint32(tensor.dims.length),
        ...tensor.dims.map(uint64),
        uint32(0), // GGML_TYPE_F32
        uint64(offset),
      ]),
    ),
  ]);
  const paddedHeader = Buffer.concat([header, Buffer.alloc(alignUp(header.length) - header.length)]);
  return { header: paddedHeader, placed, bytes: paddedHeader.length + dataBytes };
}

async function* fileChunks(plan: Layout, random: Random) {
  yield plan.header;
  let written = 0;
  for (const { tensor, offset } of plan.placed) {
    if (offset > written) yield Buffer.alloc(offset - written);
    const values = new Float32Array(elementCount(tensor));
    tensor.fill(values, random);
    // GGUF is little-endian, as are the platforms node-llama-cpp and wllama run on.
    yield new Uint8Array(values.buffer);
    written = offset + values.byteLength;
  }
}

export function checkSeed(seed: number) {
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new Error(`Seed must be an integer from 0 to ${0xffffffff}, got ${seed}`);
  }
}

/** Writes the planned file, its tensors filled in order from `seed`'s random source. */
export async function writeLayout(outPath: string, plan: Layout, seed: number): Promise<void> {
  checkSeed(seed);
  await pipeline(fileChunks(plan, createRandom(seed)), createWriteStream(outPath));
}

/**
 * Plans a file from the options and writes it, its tensors filled from `options.seed` (or
 * `defaultSeed`); a bad seed is refused before anything is planned. Answers the path and size.
 */
export async function writePlanned<Options extends { seed?: number }>(
  outPath: string,
  options: Options,
  plan: (options: Options) => Layout,
  defaultSeed: number,
): Promise<{ path: string; bytes: number }> {
  const seed = options.seed ?? defaultSeed;
  checkSeed(seed);
  const layout = plan(options);
  await writeLayout(outPath, layout, seed);
  return { path: outPath, bytes: layout.bytes };
}
