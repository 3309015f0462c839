/**
 * GGUF files kept in the browser's Origin Private File System, so in-browser models survive
 * reloads and work offline. Used by the page (saving downloads and picked files) and by the
 * engine worker (opening them). A file is written through a writable that only replaces the
 * target when closed, so an interrupted download never leaves a partial model behind.
 */
import { EngineError } from './types';

const FOLDER = 'hearth-models';
const GGUF_MAGIC = [0x47, 0x47, 0x55, 0x46]; // "GGUF"

export interface StoredGguf {
  /** The file name in the folder, also the model id for wllama. */
  id: string;
  sizeBytes: number;
  origin: string | null;
  savedAt: number;
}

interface Sidecar {
  origin: string | null;
  savedAt: number;
}

export function opfsSupported(): boolean {
  return typeof navigator !== 'undefined' && typeof navigator.storage?.getDirectory === 'function';
}

async function folder(): Promise<FileSystemDirectoryHandle> {
  if (!opfsSupported()) throw new EngineError('This browser has no private file storage (OPFS), so it cannot keep model files.', 'unavailable');
  const root = await navigator.storage.getDirectory();
  return root.getDirectoryHandle(FOLDER, { create: true });
}

/** A safe file name from a model id or a picked file's name; always ends in .gguf. */
export function ggufFileName(name: string): string {
  const stem = name
    .replace(/\.gguf$/i, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  return `${stem || 'model'}.gguf`;
}

export async function listGguf(): Promise<StoredGguf[]> {
  const dir = await folder();
  const found: StoredGguf[] = [];
  for await (const [name, handle] of dir as unknown as AsyncIterable<[string, FileSystemHandle]>) {
    if (handle.kind !== 'file' || !name.endsWith('.gguf')) continue;
    const file = await (handle as FileSystemFileHandle).getFile();
    const sidecar = await readSidecar(dir, name);
    found.push({ id: name, sizeBytes: file.size, origin: sidecar?.origin ?? null, savedAt: sidecar?.savedAt ?? file.lastModified });
  }
  return found.sort((a, b) => a.id.localeCompare(b.id));
}

async function readSidecar(dir: FileSystemDirectoryHandle, name: string): Promise<Sidecar | null> {
  try {
    const file = await (await dir.getFileHandle(`${name}.json`)).getFile();
    return JSON.parse(await file.text()) as Sidecar;
  } catch {
    return null;
  }
}

/** The stored file as a Blob backed by disk (nothing is read into memory). */
export async function openGguf(id: string): Promise<File> {
  const dir = await folder();
  try {
    return await (await dir.getFileHandle(id)).getFile();
  } catch {
    throw new EngineError(`The model file ${id} is not stored in this browser any more. Download it again on the Models page.`, 'not_stored');
  }
}

export interface SaveOptions {
  name: string;
  size: number;
  origin: string;
  signal?: AbortSignal;
  onProgress?: (written: number, size: number) => void;
}

/** Writes a stream into the folder; rejects (and keeps nothing) when it is cancelled or is not GGUF. */
export async function saveGguf(body: ReadableStream<Uint8Array>, options: SaveOptions): Promise<StoredGguf> {
  const dir = await folder();
  const id = ggufFileName(options.name);
  const handle = await dir.getFileHandle(id, { create: true });
  const existed = (await handle.getFile()).size > 0;
  const writable = await handle.createWritable();
  const reader = body.getReader();
  let written = 0;
  try {
    for (;;) {
      options.signal?.throwIfAborted();
      const { value, done } = await reader.read();
      if (done) break;
      if (written === 0 && !startsWithMagic(value)) {
        throw new EngineError(`${options.name} is not a GGUF model file (it does not start with "GGUF").`, 'invalid_file');
      }
      await writable.write(value as Uint8Array<ArrayBuffer>);
      written += value.byteLength;
      options.onProgress?.(written, options.size);
    }
    if (written !== options.size) throw new EngineError(`The download of ${options.name} ended after ${written} of ${options.size} bytes.`, 'failed');
    await writable.close();
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    await writable.abort().catch(() => undefined);
    if (!existed) await dir.removeEntry(id).catch(() => undefined);
    throw error;
  }
  const sidecar: Sidecar = { origin: options.origin, savedAt: Date.now() };
  const meta = await (await dir.getFileHandle(`${id}.json`, { create: true })).createWritable();
  await meta.write(JSON.stringify(sidecar));
  await meta.close();
  return { id, sizeBytes: written, ...sidecar };
}

function startsWithMagic(bytes: Uint8Array): boolean {
  // A first chunk shorter than the magic is accepted; llama.cpp rejects the file on load anyway.
  return GGUF_MAGIC.every((byte, index) => index >= bytes.length || bytes[index] === byte);
}

export async function removeGguf(id: string): Promise<void> {
  const dir = await folder();
  await dir.removeEntry(id).catch(() => undefined);
  await dir.removeEntry(`${id}.json`).catch(() => undefined);
}
