import { describe, expect, it } from 'vitest';

/*
 * The images of conversations in IndexedDB: a database from before images (version 1, the
 * conversations store alone) is upgraded in place with every conversation kept, and an image goes
 * with its conversation.
 */

/** Writes the database as the app before images left it: version 1 with one conversation. */
async function oldDatabase(): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const opening = indexedDB.open('hearth', 1);
    opening.onupgradeneeded = () => opening.result.createObjectStore('conversations', { keyPath: 'id' }).createIndex('updatedAt', 'updatedAt');
    opening.onerror = () => reject(opening.error);
    opening.onsuccess = () => {
      const database = opening.result;
      const transaction = database.transaction('conversations', 'readwrite');
      transaction.objectStore('conversations').put({
        id: 'conv_old',
        title: 'Before images',
        createdAt: 1,
        updatedAt: 1,
        model: 'companion:tiny',
        settings: { systemPrompt: '', temperature: null, topP: null, maxTokens: null },
        messages: [{ id: 'msg_1', role: 'user', content: 'Hello', createdAt: 1 }],
      });
      transaction.oncomplete = () => {
        database.close();
        resolve();
      };
    };
  });
}

const png = () => new Blob([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 7])], { type: 'image/png' });

describe('media storage', () => {
  it('upgrades a database from before images without losing a conversation', async () => {
    await oldDatabase();
    const { listConversations } = await import('$lib/storage/conversations');
    const { mediaOf } = await import('$lib/storage/media');
    const [conversation] = await listConversations();
    expect(conversation).toMatchObject({ id: 'conv_old', title: 'Before images', messages: [{ content: 'Hello' }] });
    expect(conversation!.messages[0]!.images).toBeUndefined();
    expect(await mediaOf('conv_old')).toEqual([]);
  });

  it('keeps an image with its conversation, prunes those no message names, and deletes the rest with it', async () => {
    const { deleteConversation, saveConversation } = await import('$lib/storage/conversations');
    const { dataUrlOf, imagesIn, mediaOf, pruneMedia, readMedia, saveMedia } = await import('$lib/storage/media');
    await saveMedia('conv_a', [
      { id: 'img_kept', blob: png() },
      { id: 'img_forked', blob: png() },
      { id: 'img_gone', blob: png() },
    ]);
    await saveMedia('conv_b', [{ id: 'img_other', blob: png() }]);
    const image = (id: string) => ({ id, type: 'image/png', width: 1, height: 1 });
    const conversation = {
      id: 'conv_a',
      title: 'Pictures',
      createdAt: 2,
      updatedAt: 2,
      model: 'companion:tiny-vision',
      settings: { systemPrompt: '', temperature: null, topP: null, maxTokens: null, overflow: 'truncate-middle' as const, thinking: true },
      messages: [{ id: 'msg_a', role: 'user' as const, content: 'Look', createdAt: 2, images: [image('img_kept')] }],
      // An earlier version of the question, kept after an edit, still shows its image.
      alternates: { '': [[{ id: 'msg_b', role: 'user' as const, content: 'See', createdAt: 1, images: [image('img_forked')] }]] },
    };
    await saveConversation(conversation);
    expect(imagesIn(conversation)).toEqual(new Set(['img_kept', 'img_forked']));

    await pruneMedia(conversation);
    expect((await mediaOf('conv_a')).sort()).toEqual(['img_forked', 'img_kept']);
    expect(await readMedia('img_gone')).toBeNull();
    const kept = await readMedia('img_kept');
    expect(kept?.type).toBe('image/png');
    expect(await dataUrlOf(kept!)).toBe(`data:image/png;base64,${btoa(String.fromCharCode(0x89, 0x50, 0x4e, 0x47, 7))}`);

    await deleteConversation('conv_a');
    expect(await mediaOf('conv_a')).toEqual([]);
    // Another conversation's images stay.
    expect(await mediaOf('conv_b')).toEqual(['img_other']);
  });
});
