import { modelLoadSettings } from '../../config/model-overrides.js';
import { configSchema } from '../../config/schema.js';
import { HearthError } from '../../errors.js';
import { estimateLoad } from '../../inference/load-estimate.js';
import { fit } from '../../models/hub.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, pathParams } from '../schema.js';
import type { ModelEstimate, ModelEstimateRequest } from '#shared/api/admin.js';

/** The body takes exactly what a model's entry in models.overrides takes. */
export const estimateBody = { ...configSchema.properties.models.properties.overrides.additionalProperties } as const satisfies BodySchema<ModelEstimateRequest>;
const idParams = pathParams({ id: { type: 'string', minLength: 1, maxLength: 256 } });

/** The memory a model would take with proposed load settings (the Models screen's settings form). */
export const modelEstimateRoutes: RoutePlugin<AdminContext, 'catalog' | 'config' | 'engine'> = async (app, { catalog, config, engine }) => {
  app.post<{ Params: { id: string }; Body: ModelEstimateRequest | undefined }>(
    '/admin/models/:id/estimate',
    { schema: { params: idParams, body: estimateBody } },
    async (request): Promise<ModelEstimate> => {
      const target = await catalog.resolve(request.params.id);
      if (target.kind !== 'local')
        throw new HearthError('invalid_request_error', 'Only local models are loaded by Hearth; remote models live at their provider.', { param: 'id' });
      const { info } = target;
      const models = config().models;
      const defaults = modelLoadSettings({ ...models, overrides: {} }, info.id);
      const settings = { ...modelLoadSettings(models, info.id), ...request.body };
      const status = engine.status();
      const estimate = await estimateLoad({
        info,
        options: { contextSize: settings.context_size, gpuLayers: settings.gpu_layers, threads: settings.threads, parallel: settings.parallel },
        gpu: models.gpu,
        budgetBytes: engine.memoryBudgetBytes,
        usedBytes: status.filter((model) => model.id !== info.id).reduce((sum, model) => sum + (model.memoryBytes ?? 0), 0),
      });
      const budget = engine.memoryBudgetBytes;
      return {
        id: info.id,
        settings,
        saved: models.overrides[info.id] ?? {},
        defaults,
        trained_context: estimate.trainedContext,
        context_size: estimate.contextSize,
        gpu: estimate.gpu,
        total_layers: estimate.totalLayers,
        gpu_layers: estimate.gpuLayers,
        parallel: estimate.parallel,
        weights_bytes: estimate.weightsBytes,
        context_bytes: estimate.contextBytes,
        memory_bytes: estimate.weightsBytes + estimate.contextBytes,
        gpu_bytes: estimate.gpuBytes,
        budget_share_bytes: estimate.budgetShareBytes,
        budget_bytes: budget,
        fits: fit(estimate.budgetShareBytes, budget),
        loaded: status.some((model) => model.id === info.id),
      };
    },
  );
};
