// IndexedDB for the conversation store under jsdom.
import 'fake-indexeddb/auto';
