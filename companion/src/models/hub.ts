/**
 * The Hugging Face Hub's public API, for the app's model library: search GGUF repositories
 * (`/api/models?search=&filter=gguf&sort=`) and list a repository's GGUF files with their
 * sizes (`/api/models/{owner}/{repo}?blobs=true`). The address comes from HF_ENDPOINT, as for
 * `hearth pull`; an unreachable hub is reported at once, in words.
 */
import { HearthError } from '../errors.js';
import type { HubFile, HubModel, MemoryFit } from '#shared/api/model-library.js';
import { hubEndpoint, hubToken, request, UnreachableError, type HttpContext } from './pull-http.js';
import { repoFiles } from './pull.js';
import { modelChoices, pickProjector, splitPartNames } from './pull-spec.js';

export interface HubOptions {
  fetch?: typeof fetch;
  /** Default: HF_ENDPOINT, else https://huggingface.co. */
  endpoint?: string;
  signal?: AbortSignal;
  /** How long to wait for the hub to answer. Default 10 s. */
  connectTimeoutMs?: number;
}

export type HubSort = 'downloads' | 'trending';

const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** Quantization names as llama.cpp and the GGUF uploaders write them (Q4_K_M, IQ3_XS, Q8_0, BF16, ...). */
const QUANT_PATTERN = /(?:^|[-_.])((?:I?Q\d(?:_[A-Z0-9]+)*)|BF16|F16|F32|FP16)(?=[-_.]|$)/i;

function context(options: HubOptions): HttpContext {
  return {
    fetch: options.fetch ?? globalThis.fetch,
    endpoint: hubEndpoint(options.endpoint),
    token: hubToken(),
    modelsDir: '',
    signal: options.signal,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
  };
}

/** Network failures as the app shows them: the hub cannot be reached, and what still works. */
async function reach<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof UnreachableError)) throw error;
    throw new HearthError(
      'provider_unreachable',
      `Hugging Face (${error.host}) cannot be reached: ${error.reason}. Searching and downloading need internet; the models on this machine keep working.`,
    );
  }
}

/** GGUF repositories matching `query`, most downloaded (or trending) first. */
export async function searchHub(query: string, limit: number, sort: HubSort, options: HubOptions = {}): Promise<HubModel[]> {
  const http = context(options);
  const url = new URL('api/models', `${http.endpoint.href.replace(/\/+$/, '')}/`);
  if (query.trim()) url.searchParams.set('search', query.trim());
  url.searchParams.set('filter', 'gguf');
  url.searchParams.set('sort', sort === 'trending' ? 'trendingScore' : 'downloads');
  url.searchParams.set('direction', '-1');
  url.searchParams.set('limit', String(limit));
  return reach(async () => {
    const response = await request(http, url.href, { accept: 'application/json' });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw new HearthError('provider_error', `${http.endpoint.host} answered HTTP ${response.status} to a model search.`);
    }
    let items: unknown;
    try {
      items = await response.json();
    } catch {
      throw new HearthError('provider_error', `${http.endpoint.host} sent an unreadable search result.`);
    }
    if (!Array.isArray(items)) throw new HearthError('provider_error', `${http.endpoint.host} sent a search result that is not a list.`);
    return items.flatMap((item: Record<string, unknown>): HubModel[] => {
      const id = typeof item.id === 'string' ? item.id : typeof item.modelId === 'string' ? item.modelId : null;
      if (!id) return [];
      const updated = typeof item.lastModified === 'string' ? item.lastModified : null;
      return [{ id, downloads: numberOr(item.downloads), likes: numberOr(item.likes), updated_at: updated }];
    });
  });
}

/** The GGUF models of one repository, with size, quantization and whether each fits `budgetBytes`. */
export async function hubRepoFiles(
  owner: string,
  repo: string,
  estimate: (sizeBytes: number) => number,
  budgetBytes: number,
  options: HubOptions = {},
): Promise<HubFile[]> {
  if (!NAME_PATTERN.test(owner) || !NAME_PATTERN.test(repo)) {
    throw new HearthError('invalid_request_error', `"${owner}/${repo}" is not an owner/repo name.`, { param: 'repo' });
  }
  const http = context(options);
  return reach(async () => {
    const files = await repoFiles(http, owner, repo);
    return modelChoices(files)
      .map((choice): HubFile => {
        const projector = pickProjector(files, choice.name);
        // The projector is downloaded and loaded with the model: it counts in the size and the fit.
        const extra = projector === null ? 0 : projector.size;
        const size = choice.size === null || extra === null ? null : choice.size + extra;
        return {
          name: choice.name,
          size_bytes: size,
          quantization: quantizationOf(choice.name),
          fits: size === null ? null : fit(estimate(choice.size!) + extra!, budgetBytes),
          parts: splitPartNames(choice.name.slice(choice.name.lastIndexOf('/') + 1)).length,
          source: `${owner}/${repo}/${choice.name}`,
          projector: projector === null ? null : { name: projector.name, size_bytes: projector.size },
        };
      })
      .sort((a, b) => (a.size_bytes ?? Infinity) - (b.size_bytes ?? Infinity) || a.name.localeCompare(b.name));
  });
}

/** `Q4_K_M` from `qwen2.5-0.5b-instruct-q4_k_m.gguf`; null when the name does not say. */
export function quantizationOf(name: string): string | null {
  const base = name
    .slice(name.lastIndexOf('/') + 1)
    .replace(/-\d{5}-of-\d{5}\.gguf$/i, '')
    .replace(/\.gguf$/i, '');
  const match = QUANT_PATTERN.exec(base);
  return match ? match[1]!.toUpperCase() : null;
}

/** Fits comfortably when the estimate is at most 3/4 of the budget, tightly up to the budget, else not. */
export function fit(neededBytes: number, budgetBytes: number): MemoryFit {
  if (neededBytes <= budgetBytes * 0.75) return 'yes';
  return neededBytes <= budgetBytes ? 'tight' : 'no';
}

function numberOr(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0;
}
