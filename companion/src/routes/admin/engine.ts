import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { ClearedConversations, NativeBuildStatus, SavedConversations } from '#shared/api/admin.js';
import { HearthError } from '../../errors.js';

/**
 * The llama-server engine's conversations saved to disk: how much they take, and deleting them (as
 * `hearth engine cache clear` does); and starting the native build again after it failed.
 */
export const engineRoutes: RoutePlugin<AdminContext, 'engine'> = async (app, { engine }) => {
  app.get('/admin/engine/conversations', async (): Promise<SavedConversations> => {
    const { files, bytes, budgetBytes, models } = engine.savedConversations();
    return { files, bytes, budget_bytes: budgetBytes, models };
  });

  app.delete('/admin/engine/conversations', async (): Promise<ClearedConversations> => ({ freed_bytes: engine.clearSavedConversations() }));

  // Try again: a failed native build is forgotten and started again in the background.
  app.post('/admin/engine/native-build', async (): Promise<NativeBuildStatus> => {
    const status = engine.retryNativeBuild();
    if (!status) throw new HearthError('invalid_request_error', 'This companion runs no llama-server engine, so it has no native build to start.');
    return status;
  });
};
