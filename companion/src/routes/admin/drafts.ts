import { HearthError } from '../../errors.js';
import { draftIncompatibility } from '../../models/draft-vocabulary.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { pathParams } from '../schema.js';
import type { DraftCandidate, DraftCandidates } from '#shared/api/admin.js';

const idParams = pathParams({ id: { type: 'string', minLength: 1, maxLength: 256 } });

/**
 * The installed models that could draft for a model (its load settings in the app): each checked
 * for the model's vocabulary (models/draft-vocabulary.ts), the compatible ones first, smaller first.
 */
export const draftRoutes: RoutePlugin<AdminContext, 'catalog' | 'config'> = async (app, { catalog, config }) => {
  app.get<{ Params: { id: string } }>('/admin/models/:id/drafts', { schema: { params: idParams } }, async (request): Promise<DraftCandidates> => {
    const target = await catalog.resolve(request.params.id);
    if (target.kind !== 'local')
      throw new HearthError('invalid_request_error', 'Only local models are loaded by Hearth; remote models live at their provider.', { param: 'id' });
    const { info } = target;
    const others = (await catalog.local()).filter(
      (model) => model.id !== info.id && model.path !== info.path && !model.error && model.capabilities.some((can) => can === 'chat' || can === 'completion'),
    );
    const candidates = await Promise.all(
      others.map(async (model): Promise<DraftCandidate> => {
        const problem = await draftIncompatibility(info.path, model.path).catch(
          (error: unknown) => `it could not be read: ${error instanceof Error ? error.message : String(error)}`,
        );
        const sameFamily = !!info.architecture && model.architecture === info.architecture;
        return {
          id: model.id,
          size_bytes: model.sizeBytes,
          same_family: sameFamily,
          suggested: !problem && sameFamily && model.sizeBytes < info.sizeBytes,
          ...(problem ? { problem } : {}),
        };
      }),
    );
    candidates.sort((a, b) => Number(!!a.problem) - Number(!!b.problem) || Number(b.suggested) - Number(a.suggested) || a.size_bytes - b.size_bytes);
    const draft = config().models.overrides[info.id]?.draft;
    return { id: info.id, draft: draft && draft !== 'none' ? draft : null, candidates };
  });
};
