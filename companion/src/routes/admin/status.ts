import { HearthError } from '../../errors.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { ServerStatus } from '#shared/api/admin.js';

/** Server status and model load/unload. */
export const statusRoutes: RoutePlugin<
  AdminContext,
  'version' | 'paths' | 'modelsDirs' | 'engine' | 'providers' | 'catalog' | 'ollamaListener' | 'startedAt'
> = async (app, { version, paths, modelsDirs, engine, providers, catalog, ollamaListener, startedAt }) => {
  app.get('/admin/status', async (request): Promise<ServerStatus> => {
    const address = request.server.server.address();
    return {
      version,
      address: typeof address === 'object' && address ? { host: address.address, port: address.port } : null,
      data_dir: paths.root,
      models_dirs: modelsDirs(),
      loaded: engine.status().map((model) => ({
        id: model.id,
        engine: model.engine,
        engine_reason: model.engineReason,
        threads: model.threads,
        thread_choices: model.threadChoices.map((choice) => ({ tokens: choice.tokens, threads: choice.threads, ms_per_token: choice.msPerToken })),
        context_size: model.contextSize,
        sequences: model.sequences,
        busy: model.busy,
        queued: model.queued,
        generated_tokens: model.generatedTokens,
        memory_bytes: model.memoryBytes,
        ...(model.process ? { process: model.process } : {}),
        ...(model.promptTokens ? { prompt_tokens: model.promptTokens } : {}),
        ...(model.projector ? { projector: model.projector } : {}),
        ...(model.build ? { build: model.build } : {}),
        ...(model.draft ? { draft: model.draft } : {}),
      })),
      providers: providers().status(),
      memory_budget_bytes: engine.memoryBudgetBytes,
      engine: await engine.engineStatus(),
      ollama_listener: ollamaListener(),
      started_at: startedAt(),
    };
  });

  app.post<{ Params: { id: string } }>('/admin/models/:id/load', async (request) => {
    const target = await catalog.resolve(request.params.id);
    if (target.kind !== 'local')
      throw new HearthError('invalid_request_error', 'Only local models are loaded by Hearth; provider models live at their provider.', { param: 'id' });
    // The owner's own Load tries a model that failed again at once.
    await engine.load(target.info, { retry: true });
    return { id: target.info.id, loaded: true };
  });

  app.post<{ Params: { id: string } }>('/admin/models/:id/unload', async (request) => ({
    id: request.params.id,
    loaded: false,
    was_loaded: await engine.unload(request.params.id),
  }));
};
