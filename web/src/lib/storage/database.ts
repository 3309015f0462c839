/**
 * The app's IndexedDB database `hearth`: conversations, and the images sent in them (`media`, by
 * conversation). Version 2 added `media`; opening an older database adds the store and keeps every
 * conversation as it was.
 */
import { openDB, type DBSchema, type IDBPDatabase } from 'idb';
import type { Conversation } from './conversations';

/** An image of a conversation's message, as stored: its bytes (an ArrayBuffer clones everywhere a Blob may not). */
export interface StoredMedia {
  id: string;
  conversationId: string;
  type: string;
  data: ArrayBuffer;
}

export interface HearthDb extends DBSchema {
  conversations: { key: string; value: Conversation; indexes: { updatedAt: number } };
  media: { key: string; value: StoredMedia; indexes: { conversationId: string } };
}

const VERSION = 2;

let database: Promise<IDBPDatabase<HearthDb>> | null = null;

export function db(): Promise<IDBPDatabase<HearthDb>> {
  database ??= openDB<HearthDb>('hearth', VERSION, {
    upgrade(upgrade, oldVersion) {
      if (oldVersion < 1) upgrade.createObjectStore('conversations', { keyPath: 'id' }).createIndex('updatedAt', 'updatedAt');
      if (oldVersion < 2) upgrade.createObjectStore('media', { keyPath: 'id' }).createIndex('conversationId', 'conversationId');
    },
    blocking() {
      // A newer version of the app wants to upgrade: let it.
      void database?.then((open) => open.close());
      database = null;
    },
  });
  return database;
}
