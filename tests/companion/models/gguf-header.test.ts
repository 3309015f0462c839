/**
 * The GGUF header reader trusts no count or length in a file: hostile or damaged headers are
 * refused with a reason a person understands, and real ones read as node-llama-cpp reads them.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readGgufFileInfo } from 'node-llama-cpp';
import { describe, expect, it } from 'vitest';
import { GGUF_HEADER_LIMITS, readGgufHeader } from '../../../companion/src/models/gguf-header.js';
import { chatMetadata, ggufArrayBomb, ggufHeader, u32, u64, writeGgufHeader } from '../../helpers/gguf-header.js';
import { tinyModelPath } from '../../helpers/models.js';
import { tempFolder } from '../../helpers/temp.js';

const folder = tempFolder('gguf-header');
let counter = 0;

async function file(bytes: Buffer): Promise<string> {
  const path = join(folder, `case-${++counter}.gguf`);
  await writeFile(path, bytes);
  return path;
}

/** "GGUF", version 3, the tensor and key counts, then `rest`. */
function raw(keys: number | bigint, rest: Buffer[], tensors: number | bigint = 0): Buffer {
  return Buffer.concat([Buffer.from('GGUF'), u32(3), u64(tensors), u64(keys), ...rest]);
}

const key = (name: string) => Buffer.concat([u64(Buffer.byteLength(name)), Buffer.from(name)]);

describe('readGgufHeader', () => {
  it('refuses the 60-byte file whose array claims 2^40 elements, naming the key', async () => {
    await expect(readGgufHeader(await file(ggufArrayBomb()))).rejects.toThrow('it says it has 1099511627776 elements in "a"; Hearth reads at most 16777216');
  });

  it('refuses counts and lengths that pass the end of the file', async () => {
    // An array within the count limit whose elements are not there.
    const shortArray = await file(ggufArrayBomb(1000n));
    await expect(readGgufHeader(shortArray)).rejects.toThrow(/the elements of "a" \(1000 bytes at byte 49\) passes the end of the file \(60 bytes\)/);
    // A string value 2^40 bytes long.
    const longString = await file(raw(1, [key('general.name'), u32(8), u64(2n ** 40n), Buffer.from('x')]));
    await expect(readGgufHeader(longString)).rejects.toThrow(/the text of "general.name" \(1099511627776 bytes at byte \d+\) passes the end of the file/);
    // Strings of an array running out.
    const strings = await file(raw(1, [key('tokenizer.ggml.tokens'), u32(9), u32(8), u64(3), u64(1), Buffer.from('a'), u64(500)]));
    await expect(readGgufHeader(strings)).rejects.toThrow(/element 2 of "tokenizer.ggml.tokens" \(500 bytes at byte \d+\) passes the end of the file/);
    // More keys than the file holds.
    await expect(readGgufHeader(await file(raw(5, [key('general.architecture'), u32(4), u32(1)])))).rejects.toThrow(/passes the end of the file/);
    // A tensor list cut short.
    const tensors = await file(raw(0, [key('blk.0.weight'), u32(2), u64(4)], 1));
    await expect(readGgufHeader(tensors)).rejects.toThrow(/the entry of tensor "blk.0.weight" .* passes the end of the file/);
  });

  it('refuses counts over the limits, unknown types, arrays of arrays and what is not GGUF', async () => {
    await expect(readGgufHeader(await file(raw(2n ** 62n, [])))).rejects.toThrow(
      'it says it has 4611686018427387904 metadata keys; Hearth reads at most 65536',
    );
    await expect(readGgufHeader(await file(raw(0, [], 2n ** 40n)))).rejects.toThrow('it says it has 1099511627776 tensors; Hearth reads at most 65536');
    await expect(readGgufHeader(await file(raw(1, [key('x'), u32(13), u64(0)])))).rejects.toThrow('"x" has the value type 13, which GGUF does not define');
    await expect(readGgufHeader(await file(raw(1, [key('x'), u32(9), u32(9), u64(1)])))).rejects.toThrow('"x" is an array of arrays');
    await expect(readGgufHeader(await file(raw(1, [u64(2n ** 32n), Buffer.from('x')])))).rejects.toThrow(
      'the name of key 1 is 4294967296 bytes long; Hearth accepts names of at most 1024',
    );
    const fiveDimensions = await file(raw(0, [key('t'), u32(5), Buffer.alloc(64)], 1));
    await expect(readGgufHeader(fiveDimensions)).rejects.toThrow('tensor "t" says it has 5 dimensions; ggml tensors have at most 4');
    await expect(readGgufHeader(await file(Buffer.from('PK\u0003\u0004 a zip file')))).rejects.toThrow('it is not a GGUF file');
    await expect(readGgufHeader(await file(Buffer.from('GG')))).rejects.toThrow('it is not a GGUF file');
    const v1 = Buffer.concat([Buffer.from('GGUF'), u32(1), Buffer.alloc(16)]);
    await expect(readGgufHeader(await file(v1))).rejects.toThrow('GGUF version 1');
    const bigEndian = Buffer.concat([Buffer.from('GGUF'), Buffer.from([0, 0, 0, 3]), Buffer.alloc(16)]);
    await expect(readGgufHeader(await file(bigEndian))).rejects.toThrow('big-endian');
  });

  it('stops at the byte cap and the deadline', async () => {
    const big = await file(Buffer.concat([ggufHeader({ 'tokenizer.chat_template': 'x'.repeat(4096) }), Buffer.alloc(4096)]));
    await expect(readGgufHeader(big, { ...GGUF_HEADER_LIMITS, maxHeaderBytes: 1024 * 1024 })).resolves.toMatchObject({
      'tokenizer.chat_template': 'x'.repeat(4096),
    });
    await expect(readGgufHeader(big, { ...GGUF_HEADER_LIMITS, maxHeaderBytes: 2048 })).rejects.toThrow(/its header goes on past/);
    // A deadline already passed: the walk stops at its first read.
    await expect(readGgufHeader(big, { ...GGUF_HEADER_LIMITS, timeoutMs: -1 })).rejects.toThrow('reading its header took longer than');
  });

  it('reads real headers as node-llama-cpp does: every scalar key, arrays present but not kept', async () => {
    const path = await writeGgufHeader(join(folder, 'chat.gguf'), {
      ...chatMetadata(8192, 'chat'),
      'tokenizer.ggml.tokens': ['a', 'b', 'c'],
      'x.big': 2n ** 60n,
    });
    const metadata = await readGgufHeader(path);
    expect({ ...metadata }).toEqual({ ...chatMetadata(8192, 'chat'), 'tokenizer.ggml.tokens': null, 'x.big': 2n ** 60n });

    const tiny = await tinyModelPath();
    const ours = await readGgufHeader(tiny);
    const theirs = flatten((await readGgufFileInfo(tiny, { readTensorInfo: false, logWarnings: false })).metadata as unknown as Record<string, unknown>);
    expect(ours['general.architecture']).toBe('llama');
    expect({ ...ours }).toEqual(theirs);
  });

  it('treats a key named __proto__ as a key', async () => {
    const text = (value: string) => Buffer.concat([u32(8), u64(value.length), Buffer.from(value)]);
    const metadata = await readGgufHeader(await file(raw(2, [key('__proto__'), text('x'), key('general.architecture'), text('llama')])));
    expect(Object.getPrototypeOf(metadata)).toBeNull();
    expect(Object.keys(metadata)).toEqual(['__proto__', 'general.architecture']);
  });
});

/** node-llama-cpp's nested metadata as dotted keys, arrays as null (what readGgufHeader gives). */
function flatten(nested: Record<string, unknown>, prefix = '', into: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [name, value] of Object.entries(nested)) {
    const full = prefix === '' ? name : `${prefix}.${name}`;
    if (Array.isArray(value)) into[full] = null;
    else if (value !== null && typeof value === 'object') flatten(value as Record<string, unknown>, full, into);
    else into[full] = value;
  }
  return into;
}
