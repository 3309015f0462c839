/**
 * `hearth pull`: download a GGUF from Hugging Face (or any https URL) into the models
 * folder. Resumable (`<file>.partial` + HTTP Range), verified against Content-Length, and
 * quick to fail with a plain explanation when the machine is offline.
 */
import { open, mkdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { HearthError } from '../errors.js';
import { ggufProblem } from './gguf-metadata.js';
import { abortError, delay, httpError, hubEndpoint, hubToken, networkReason, request, type HttpContext } from './pull-http.js';
import { isProjectorName, parsePullSpec, pickProjector, pickRepoFile, projectorFileName, splitPartNames, type RepoFile } from './pull-spec.js';

export { parsePullSpec, pickRepoFile, type PullSpec, type RepoFile } from './pull-spec.js';

export interface PullProgress {
  file: string;
  received: number;
  total: number | null;
}

export interface PullOptions {
  spec: string;
  modelsDir: string;
  fetch?: typeof fetch;
  /** Default: process.env.HF_ENDPOINT ?? 'https://huggingface.co'. */
  endpoint?: string;
  onProgress?: (progress: PullProgress) => void;
  /** Called once the files to download are known (every part of a split model, then its projector if the repository has one), before any byte moves. */
  onResolved?: (files: ResolvedFile[]) => void;
  signal?: AbortSignal;
  /** How long to wait for a server to answer before calling it unreachable. Default 10 s. */
  connectTimeoutMs?: number;
}

export interface ResolvedFile {
  /** Name in the models folder. */
  fileName: string;
  /** From the hub's listing; null when unknown until the download starts. */
  size: number | null;
}

export interface PullResult {
  /** Absolute path of the downloaded .gguf (first part of a split model). */
  path: string;
  /** Bytes on disk (all parts). */
  bytes: number;
}

interface Context extends HttpContext {
  onProgress: ((progress: PullProgress) => void) | undefined;
}

interface Download {
  url: string;
  fileName: string;
  size: number | null;
  /** How errors name it: owner/repo/path or the URL. */
  label: string;
}

/** Retries of an interrupted body that brought no new bytes before giving up. */
const MAX_STALLED_ATTEMPTS = 3;
/** A body that sends nothing for this long is treated as interrupted. */
const IDLE_TIMEOUT_MS = 60_000;

export async function pullModel(options: PullOptions): Promise<PullResult> {
  const context: Context = {
    fetch: options.fetch ?? globalThis.fetch,
    endpoint: hubEndpoint(options.endpoint ?? process.env.HF_ENDPOINT),
    token: hubToken(),
    modelsDir: path.resolve(options.modelsDir),
    signal: options.signal,
    connectTimeoutMs: options.connectTimeoutMs ?? 10_000,
    onProgress: options.onProgress,
  };
  const downloads = await resolveDownloads(context, options.spec);
  options.onResolved?.(downloads.map(({ fileName, size }) => ({ fileName, size })));
  await mkdir(context.modelsDir, { recursive: true });
  let bytes = 0;
  for (const download of downloads) bytes += await downloadFile(context, download);
  return { path: path.join(context.modelsDir, downloads[0]!.fileName), bytes };
}

// ---------------------------------------------------------------- what to download

async function resolveDownloads(context: Context, specText: string): Promise<Download[]> {
  const spec = parsePullSpec(specText);
  if (spec.kind === 'url') {
    const url = new URL(spec.url);
    const directory = url.pathname.slice(0, url.pathname.lastIndexOf('/') + 1);
    const name = decodeURIComponent(url.pathname.slice(directory.length));
    return splitPartNames(name).map((part) => {
      const partUrl = new URL(url);
      partUrl.pathname = directory + encodeURIComponent(part);
      return { url: partUrl.href, fileName: safeFileName(part), size: null, label: partUrl.href };
    });
  }
  const listing = spec.kind === 'repo' ? await repoFiles(context, spec.owner, spec.repo) : await projectorListing(context, spec.owner, spec.repo);
  const filePath = spec.kind === 'file' ? spec.file : pickRepoFile(listing, `${spec.owner}/${spec.repo}`, spec.quant);
  const directory = filePath.includes('/') ? filePath.slice(0, filePath.lastIndexOf('/') + 1) : '';
  const sizes = new Map(listing.map((file) => [file.name, file.size]));
  const fromRepo = (name: string, fileName: string): Download => ({
    size: sizes.get(name) ?? null,
    url: `${context.endpoint.href.replace(/\/+$/, '')}/${encodeURIComponent(spec.owner)}/${encodeURIComponent(spec.repo)}/resolve/main/${name.split('/').map(encodeURIComponent).join('/')}`,
    fileName,
    label: `${spec.owner}/${spec.repo}/${name}`,
  });
  const parts = splitPartNames(filePath.slice(directory.length)).map((part) => fromRepo(directory + part, safeFileName(part)));
  // A repository with a multimodal projector: it comes along, beside the model, as one more part.
  const projector = isProjectorName(filePath) ? null : pickProjector(listing, filePath);
  return projector ? [...parts, fromRepo(projector.name, safeFileName(projectorFileName(spec.repo, projector.name)))] : parts;
}

/**
 * For a download of one named file: the repository's listing, to find a projector that goes with
 * it. The file can still be downloaded when the listing cannot be had (an empty list then).
 */
async function projectorListing(context: Context, owner: string, repo: string): Promise<RepoFile[]> {
  try {
    return await repoFiles(context, owner, repo);
  } catch (error) {
    if (context.signal?.aborted) throw error;
    return [];
  }
}

/** Every file of a repository with its size (the hub's model-info API with `blobs=true`). */
export async function repoFiles(context: HttpContext, owner: string, repo: string): Promise<RepoFile[]> {
  const url = `${context.endpoint.href.replace(/\/+$/, '')}/api/models/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}?blobs=true`;
  const response = await request(context, url, { accept: 'application/json' });
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    throw httpError(response.status, `${owner}/${repo}`, context.endpoint.host);
  }
  let info: { siblings?: { rfilename?: unknown; size?: unknown; lfs?: { size?: unknown } }[] };
  try {
    info = (await response.json()) as typeof info;
  } catch {
    throw new HearthError('provider_error', `${context.endpoint.host} sent an unreadable file list for ${owner}/${repo}.`);
  }
  const files: RepoFile[] = [];
  for (const sibling of info.siblings ?? []) {
    if (typeof sibling.rfilename !== 'string') continue;
    const size = typeof sibling.size === 'number' ? sibling.size : typeof sibling.lfs?.size === 'number' ? sibling.lfs.size : null;
    files.push({ name: sibling.rfilename, size });
  }
  return files;
}

function safeFileName(name: string): string {
  // Control characters are exactly what must go from a file name.
  // eslint-disable-next-line no-control-regex
  const cleaned = name.replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').replace(/^\.+/, '');
  if (!/\.gguf$/i.test(cleaned)) {
    throw new HearthError('invalid_request_error', `"${name}" is not a .gguf file.`, { param: 'spec' });
  }
  return cleaned;
}

// ---------------------------------------------------------------- one file

/** Downloads one file into modelsDir (resuming a .partial); returns its size. */
async function downloadFile(context: Context, download: Download): Promise<number> {
  const target = path.join(context.modelsDir, download.fileName);
  const existing = await stat(target).catch(() => null);
  if (existing?.isFile()) {
    context.onProgress?.({ file: download.fileName, received: existing.size, total: existing.size });
    return existing.size;
  }
  const partial = `${target}.partial`;
  let stalled = 0;
  let lastFailure = '';
  while (stalled < MAX_STALLED_ATTEMPTS) {
    const before = (await stat(partial).catch(() => null))?.size ?? 0;
    const outcome = await attempt(context, download, partial, before);
    if (outcome.done) {
      await refuseUnreadable(partial, download);
      await rename(partial, target);
      return outcome.total;
    }
    lastFailure = outcome.reason;
    const after = (await stat(partial).catch(() => null))?.size ?? 0;
    stalled = after > before ? 0 : stalled + 1;
    if (stalled < MAX_STALLED_ATTEMPTS) await delay(200 * (stalled + 1), context.signal);
  }
  const have = (await stat(partial).catch(() => null))?.size ?? 0;
  throw new HearthError(
    'provider_error',
    `The download of ${download.fileName} from ${new URL(download.url).host} keeps stopping early ` +
      `(${lastFailure}; ${have} bytes kept in ${partial}). Run the same command again to resume.`,
  );
}

/** A file whose GGUF header cannot be read safely never enters the models folder: it is deleted and the download fails. */
async function refuseUnreadable(partial: string, download: Download): Promise<void> {
  const problem = await ggufProblem(partial);
  if (problem === null) return;
  await rm(partial, { force: true });
  throw new HearthError(
    'provider_error',
    `${download.label} is not a usable GGUF model file (${problem}); Hearth deleted it instead of adding it to the models folder.`,
  );
}

type Outcome = { done: true; total: number } | { done: false; reason: string };

async function attempt(context: Context, download: Download, partial: string, have: number): Promise<Outcome> {
  const response = await request(context, download.url, {
    'accept-encoding': 'identity',
    ...(have > 0 ? { range: `bytes=${have}-` } : {}),
  });
  const host = new URL(download.url).host;
  if (response.status === 416 && have > 0) {
    // Nothing left to send: the partial is complete if the server's size says so.
    await response.body?.cancel().catch(() => undefined);
    const total = Number(/\/(\d+)$/.exec(response.headers.get('content-range') ?? '')?.[1] ?? NaN);
    if (total === have) return { done: true, total };
    await rm(partial, { force: true });
    return { done: false, reason: 'the server rejected the resume point' };
  }
  if (response.status !== 200 && response.status !== 206) {
    await response.body?.cancel().catch(() => undefined);
    throw httpError(response.status, download.label, host);
  }
  const length = response.headers.get('content-length');
  const expectedBody = length === null ? null : Number(length);
  let start = 0;
  let total: number | null = expectedBody;
  if (response.status === 206) {
    const range = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(response.headers.get('content-range') ?? '');
    if (!range || Number(range[1]) !== have) {
      // A range we did not ask for: start again from the beginning.
      await response.body?.cancel().catch(() => undefined);
      await rm(partial, { force: true });
      return { done: false, reason: 'the server answered a different range' };
    }
    start = have;
    total = range[3] === '*' ? null : Number(range[3]);
    const rangeLength = Number(range[2]) - Number(range[1]) + 1;
    if (expectedBody !== null && expectedBody !== rangeLength) {
      await response.body?.cancel().catch(() => undefined);
      throw new HearthError('provider_error', `${host} sent a Content-Length that does not match its Content-Range for ${download.fileName}.`);
    }
  } else if (expectedBody !== null) {
    total = expectedBody;
  }
  const received = await writeBody(context, response, partial, start, download.fileName, total);
  const size = start + received.bytes;
  if (total !== null && size > total) {
    await rm(partial, { force: true });
    throw new HearthError(
      'provider_error',
      `${host} sent ${size} bytes for ${download.fileName}, more than the ${total} it announced; the download was discarded.`,
    );
  }
  if (received.error !== null) return { done: false, reason: received.error };
  if (total !== null && size < total) return { done: false, reason: `received ${size} of ${total} bytes` };
  return { done: true, total: size };
}

/** Streams the body into the partial file (appending at `start`); stops quietly on a network error. */
async function writeBody(
  context: Context,
  response: Response,
  partial: string,
  start: number,
  file: string,
  total: number | null,
): Promise<{ bytes: number; error: string | null }> {
  const handle = await open(partial, start > 0 ? 'a' : 'w');
  let bytes = 0;
  let idle: NodeJS.Timeout | undefined;
  const reader = response.body?.getReader();
  let timedOut = false;
  const arm = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      timedOut = true;
      void reader?.cancel().catch(() => undefined);
    }, IDLE_TIMEOUT_MS);
  };
  try {
    context.onProgress?.({ file, received: start, total });
    if (!reader) return { bytes, error: null };
    arm();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arm();
      await handle.write(value);
      bytes += value.byteLength;
      context.onProgress?.({ file, received: start + bytes, total });
    }
    return { bytes, error: timedOut ? `no data for ${IDLE_TIMEOUT_MS / 1000} s` : null };
  } catch (error) {
    if (context.signal?.aborted) throw abortError(context.signal);
    return { bytes, error: `the connection broke: ${networkReason(error)}` };
  } finally {
    clearTimeout(idle);
    await handle.close();
  }
}
