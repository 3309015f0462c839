import { estimateBytes } from '../../inference/engine.js';
import { hubRepoFiles, searchHub, type HubSort } from '../../models/hub.js';
import { removeModelFiles } from '../../models/remove.js';
import { HearthError } from '../../errors.js';
import { openEventStream } from '../../http/sse.js';
import type { AdminContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import { type BodySchema, nonEmptyString, pathParams, requiredBody, shortName } from '../schema.js';
import type { DownloadList, DownloadRequest, HubRepoFiles, HubSearchResponse, ModelDownload, RemovedModel } from '#shared/api/model-library.js';

export const searchQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    q: { type: 'string', maxLength: 200 },
    limit: { type: 'string', pattern: '^[0-9]{1,3}$' },
    sort: { enum: ['downloads', 'trending'] },
  },
} as const;
const name = { type: 'string', minLength: 1, maxLength: 96 };
export const repoParams = pathParams({ owner: name, repo: name });
export const idParams = pathParams({ id: shortName });
export const downloadBody = requiredBody({ source: nonEmptyString(2048) }) satisfies BodySchema<DownloadRequest>;

type IdRoute = { Params: { id: string } };

/** The model library: Hugging Face search, downloads (with a progress stream), removing a downloaded model. */
export const modelLibraryRoutes: RoutePlugin<AdminContext, 'engine' | 'downloads' | 'catalog' | 'paths' | 'shutdown'> = async (
  app,
  { engine, downloads, catalog, paths, shutdown },
) => {
  app.get<{ Querystring: { q?: string; limit?: string; sort?: HubSort } }>(
    '/admin/models/search',
    { schema: { querystring: searchQuery } },
    async (request): Promise<HubSearchResponse> => {
      const limit = Math.min(100, Math.max(1, Number(request.query.limit ?? 20)));
      return { data: await searchHub(request.query.q ?? '', limit, request.query.sort ?? 'downloads') };
    },
  );

  app.get<{ Params: { owner: string; repo: string } }>(
    '/admin/models/search/:owner/:repo',
    { schema: { params: repoParams } },
    async (request): Promise<HubRepoFiles> => {
      const { owner, repo } = request.params;
      const budget = engine.memoryBudgetBytes;
      const data = await hubRepoFiles(owner, repo, (sizeBytes) => estimateBytes({ sizeBytes }), budget);
      return { id: `${owner}/${repo}`, data, memory_budget_bytes: budget };
    },
  );

  app.get('/admin/models/downloads', async (): Promise<DownloadList> => ({ data: downloads.list() }));

  app.post<{ Body: DownloadRequest }>('/admin/models/downloads', { schema: { body: downloadBody } }, async (request, reply): Promise<ModelDownload> => {
    void reply.status(201);
    return downloads.create(request.body.source);
  });

  app.get<IdRoute>('/admin/models/downloads/:id', { schema: { params: idParams } }, async (request) => downloads.get(request.params.id));

  app.post<IdRoute>('/admin/models/downloads/:id/pause', { schema: { params: idParams } }, async (request) => downloads.pause(request.params.id));

  app.post<IdRoute>('/admin/models/downloads/:id/resume', { schema: { params: idParams } }, async (request) => downloads.resume(request.params.id));

  app.delete<IdRoute>('/admin/models/downloads/:id', { schema: { params: idParams } }, async (request) => downloads.cancel(request.params.id));

  // The download now, then every change until it ends (completed, failed, cancelled) or pauses.
  app.get<IdRoute>('/admin/models/downloads/:id/events', { schema: { params: idParams } }, async (request, reply) => {
    const first = downloads.get(request.params.id);
    const stream = openEventStream(request, reply, shutdown);
    const ended = (download: ModelDownload) => download.status !== 'queued' && download.status !== 'downloading';
    stream.data(first);
    if (ended(first)) return stream.end();
    const stop = downloads.subscribe((download) => {
      if (download.id !== first.id) return;
      stream.data(download);
      if (ended(download)) finish();
    });
    const finish = () => {
      stop();
      stream.end();
    };
    stream.signal.addEventListener('abort', finish, { once: true });
  });

  app.delete<IdRoute>('/admin/models/:id', { schema: { params: idParams } }, async (request): Promise<RemovedModel> => {
    const target = await catalog.resolve(request.params.id).catch((error: unknown) => {
      // A model that cannot load (a broken file) can still be removed.
      if (error instanceof HearthError && error.code === 'model_load_failed') return null;
      throw error;
    });
    const info = target?.kind === 'local' ? target.info : (await catalog.local()).find((model) => model.id === request.params.id);
    if (!info) throw new HearthError('invalid_request_error', 'Provider models live at their provider; Hearth removes only local models.', { param: 'id' });
    await engine.unload(info.id);
    const files = await removeModelFiles(info, paths.models);
    await catalog.local(true);
    return { id: info.id, deleted: true, files };
  });
};
