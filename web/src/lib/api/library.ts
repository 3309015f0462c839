/** The companion's model library (loopback-only admin routes): Hugging Face search, downloads, removal. */
import type { DownloadList, HubModel, HubRepoFiles, HubSearchResponse, ModelDownload, RemovedModel } from '#shared/api/model-library.js';
import { request } from './client';

export type HubSort = 'downloads' | 'trending';

export async function searchHub(query: string, sort: HubSort = 'downloads', limit = 20, signal?: AbortSignal): Promise<HubModel[]> {
  const params = new URLSearchParams({ q: query, limit: String(limit), sort });
  return (await request<HubSearchResponse>(`/admin/models/search?${params}`, { signal })).data;
}

export function repoFiles(repo: string, signal?: AbortSignal): Promise<HubRepoFiles> {
  const [owner, name] = repo.split('/');
  return request<HubRepoFiles>(`/admin/models/search/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}`, { signal });
}

export async function listDownloads(): Promise<ModelDownload[]> {
  return (await request<DownloadList>('/admin/models/downloads', { cache: 'no-store' })).data;
}

export function startDownload(source: string): Promise<ModelDownload> {
  return request<ModelDownload>('/admin/models/downloads', { method: 'POST', body: JSON.stringify({ source }) });
}

export function pauseDownload(id: string): Promise<ModelDownload> {
  return request<ModelDownload>(`/admin/models/downloads/${encodeURIComponent(id)}/pause`, { method: 'POST' });
}

export function resumeDownload(id: string): Promise<ModelDownload> {
  return request<ModelDownload>(`/admin/models/downloads/${encodeURIComponent(id)}/resume`, { method: 'POST' });
}

/** Cancels a running download (its partial file is deleted), or forgets a finished one. */
export function cancelDownload(id: string): Promise<ModelDownload> {
  return request<ModelDownload>(`/admin/models/downloads/${encodeURIComponent(id)}`, { method: 'DELETE' });
}

/** Deletes a model from Hearth's own models folder. */
export function removeModel(id: string): Promise<RemovedModel> {
  return request<RemovedModel>(`/admin/models/${encodeURIComponent(id)}`, { method: 'DELETE' });
}
