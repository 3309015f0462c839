/**
 * The conversations the companion's llama-server engine keeps on disk so that a restart or a
 * reload does not make a model read them again (Server screen): how many, the disk they take
 * against each model's share, and deleting them all.
 */
import { clearSavedConversations, savedConversations } from '$lib/api/server';
import { formatBytes } from '$lib/stores/models.svelte';
import type { SavedConversations } from '#shared/api/admin.js';
import { adminProblem } from './problems';

const describe = (error: unknown) => adminProblem(error, 'see or clear the saved conversations');

export class SavedConversationsStore {
  info = $state<SavedConversations | null>(null);
  error = $state<string | null>(null);
  notice = $state<string | null>(null);
  /** Clear was pressed: the question is asked before anything is deleted. */
  confirming = $state(false);
  clearing = $state(false);

  async refresh(): Promise<void> {
    try {
      this.info = await savedConversations();
      this.error = null;
    } catch (error) {
      this.error = describe(error);
    }
  }

  /** Deletes every saved conversation (asked first: `confirming`). */
  async clear(): Promise<void> {
    this.confirming = false;
    this.clearing = true;
    this.notice = null;
    try {
      const { freed_bytes } = await clearSavedConversations();
      this.notice = `Cleared: ${formatBytes(freed_bytes)} freed.`;
      this.error = null;
      await this.refresh();
    } catch (error) {
      this.error = describe(error);
    } finally {
      this.clearing = false;
    }
  }
}

export const savedConversationsStore = new SavedConversationsStore();
