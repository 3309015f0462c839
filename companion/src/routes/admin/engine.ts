import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { ClearedConversations, SavedConversations } from '#shared/api/admin.js';

/** The llama-server engine's conversations saved to disk: how much they take, and deleting them (as `hearth engine cache clear` does). */
export const engineRoutes: RoutePlugin<AdminContext, 'engine'> = async (app, { engine }) => {
  app.get('/admin/engine/conversations', async (): Promise<SavedConversations> => {
    const { files, bytes, budgetBytes, models } = engine.savedConversations();
    return { files, bytes, budget_bytes: budgetBytes, models };
  });

  app.delete('/admin/engine/conversations', async (): Promise<ClearedConversations> => ({ freed_bytes: engine.clearSavedConversations() }));
};
