/**
 * The images and recordings sent in conversations, kept in this browser beside them (IndexedDB
 * store `media`): a message holds only their ids (MessageImage, MessageSound), so saving a
 * conversation as a reply streams never copies the bytes again. They go when their conversation
 * is deleted.
 */
import type { Conversation } from './conversations';
import { db } from './database';

/** An image to store with a conversation: its id (the message's MessageImage names it) and its bytes. */
export interface MediaItem {
  id: string;
  blob: Blob;
}

export async function saveMedia(conversationId: string, items: MediaItem[]): Promise<void> {
  if (items.length === 0) return;
  // The bytes are read before the transaction opens: IndexedDB closes a transaction that waits on anything else.
  const records = await Promise.all(items.map(async ({ id, blob }) => ({ id, conversationId, type: blob.type, data: await bytesOf(blob) })));
  const transaction = (await db()).transaction('media', 'readwrite');
  await Promise.all([...records.map((record) => transaction.store.put(record)), transaction.done]);
}

/** An image's bytes, or null when it is not stored (removed, or never saved). */
export async function readMedia(id: string): Promise<Blob | null> {
  const record = await (await db()).get('media', id);
  return record ? new Blob([record.data], { type: record.type }) : null;
}

/**
 * An object URL for `blob`, or for the media stored under `id`, handed to `show` (`gone` when it is
 * no longer stored). The function returned (an effect's cleanup) revokes the URL, drops a read
 * still under way and hands `show` no URL.
 */
export function showMedia(blob: Blob | null, id: string | null, show: (url: string | null, gone: boolean) => void): () => void {
  let cancelled = false;
  let made: string | null = null;
  const use = (source: Blob | null) => {
    if (cancelled) return;
    made = source ? URL.createObjectURL(source) : null;
    show(made, !source);
  };
  if (blob) use(blob);
  else if (id) void readMedia(id).then(use, () => use(null));
  return () => {
    cancelled = true;
    if (made) URL.revokeObjectURL(made);
    show(null, false);
  };
}

/** The ids of the images stored for a conversation. */
export async function mediaOf(conversationId: string): Promise<string[]> {
  return (await db()).getAllKeysFromIndex('media', 'conversationId', conversationId);
}

/** Removes the images of a conversation, all of them or those `keep` does not name. */
export async function deleteMedia(conversationId: string, keep: ReadonlySet<string> = new Set()): Promise<void> {
  const transaction = (await db()).transaction('media', 'readwrite');
  const ids = await transaction.store.index('conversationId').getAllKeys(conversationId);
  await Promise.all([...ids.filter((id) => !keep.has(id)).map((id) => transaction.store.delete(id)), transaction.done]);
}

/** The ids of the images and recordings a conversation's messages name, in every version of them. */
export function imagesIn(conversation: Pick<Conversation, 'messages' | 'alternates'>): Set<string> {
  const lists = [conversation.messages, ...Object.values(conversation.alternates ?? {}).flat()];
  return new Set(lists.flatMap((messages) => messages.flatMap((message) => [...(message.images ?? []), ...(message.sounds ?? [])].map((item) => item.id))));
}

/** Removes the images and recordings no message of the conversation names any more (a deleted or replaced question's). */
export function pruneMedia(conversation: Pick<Conversation, 'id' | 'messages' | 'alternates'>): Promise<void> {
  return deleteMedia(conversation.id, imagesIn(conversation));
}

function read<T>(blob: Blob, as: (reader: FileReader) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result as T);
    reader.onerror = () => reject(reader.error ?? new Error('The image could not be read.'));
    as(reader);
  });
}

/** A blob's bytes (FileReader: every browser, and jsdom, has it). */
function bytesOf(blob: Blob): Promise<ArrayBuffer> {
  return read(blob, (reader) => reader.readAsArrayBuffer(blob));
}

/** A blob as a data URL (`data:image/png;base64,...`), the way chat completions take an image. */
export function dataUrlOf(blob: Blob): Promise<string> {
  return read(blob, (reader) => reader.readAsDataURL(blob));
}
