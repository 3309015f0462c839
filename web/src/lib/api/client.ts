/** The one request helper and the one typed error; every module in this folder builds on it. */
import { ROUTE_SCOPES } from '#shared/api/access.js';
import type { ErrorBody, ErrorCode } from '#shared/api/errors.js';
import { ROUTE_TABLE } from '#shared/api/routes.js';
import { readAccessKey } from '$lib/storage/access-key';
import { readAdminProof } from '$lib/storage/admin-proof';

/** Failures found by the client itself rather than reported by the companion. */
export type ClientErrorCode = 'unreachable' | 'invalid_response' | 'stream_interrupted';

/** The one error this module throws, apart from the abort reason of a cancelled call. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | ClientErrorCode,
    message: string,
    readonly param: string | null = null,
    /** What else the error said, beyond the OpenAI fields (a configuration's `problems`, a change's `risks`). */
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function isErrorBody(value: unknown): value is ErrorBody {
  const error = (value as Partial<ErrorBody> | null)?.error;
  return typeof error === 'object' && error !== null && typeof error.message === 'string';
}

/** The companion's message as a person reads it: Markdown code spans (`hearth open`) lose their backticks. */
export function fromErrorBody(status: number, body: ErrorBody): ApiError {
  const { message, code, param, type: _type, ...details } = body.error;
  return new ApiError(status, code, message.replace(/`([^`\n]+)`/g, '$1'), param ?? null, details);
}

async function errorFrom(response: Response): Promise<ApiError> {
  const text = await response.text();
  try {
    const body: unknown = JSON.parse(text);
    if (isErrorBody(body)) return fromErrorBody(response.status, body);
  } catch {
    // Not JSON: described by the status line below.
  }
  return new ApiError(response.status, 'invalid_response', `HTTP ${response.status} ${response.statusText}`.trim());
}

/**
 * Whether a request to `path` carries the access key: only paths on the companion's own origin
 * whose family in the route table is a key scope (`/v1/…`, `/agents`, `/mcp`, `/memory/…`). Never
 * admin routes (`/admin/*`, `/agents/approvals`: loopback and the owner's credential, no key),
 * `/health`, the app's pages and files, or another origin.
 */
export function takesKey(path: string): boolean {
  return (ROUTE_SCOPES as readonly string[]).includes(ownFamily(path) ?? 'web');
}

/** The route family of a path on the companion's own origin (undefined for another origin, or the app's own pages and files). */
function ownFamily(path: string): string | undefined {
  if (!path.startsWith('/') || path.startsWith('//')) return undefined;
  const pathname = path.split(/[?#]/, 1)[0]!;
  return ROUTE_TABLE.find((route) => route.pattern.test(pathname))?.family;
}

/** Whether a request to `path` is for an admin route (`/admin/*`, `/agents/approvals`) of the companion's own origin. */
export function isAdminPath(path: string): boolean {
  return ownFamily(path) === 'admin';
}

/** The header that carries the admin session's proof (the companion's `X-Hearth-Session`). */
export const SESSION_PROOF_HEADER = 'x-hearth-session';

/**
 * The saved key the companion refused (401: unknown, expired or revoked) while this page was
 * open, and the companion's reason. It is not sent again until it is saved anew or the page
 * reloads: every refused key counts towards the companion's lockout of this address (5 a
 * minute), and the status check runs every few seconds.
 */
let refused: { key: string; error: ApiError } | null = null;

/** Forgets that the saved key was refused (after a key is saved or forgotten). */
export function clearKeyRefusal(): void {
  refused = null;
}

/** Sends one request to the companion; resolves only for a 2xx response. */
export async function send(path: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has('accept')) headers.set('accept', 'application/json');
  if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
  // An Authorization header set by the caller (a key being checked) wins over the saved key.
  let saved: string | null = null;
  let skipped: ApiError | null = null;
  headers.delete(SESSION_PROOF_HEADER);
  if (isAdminPath(path)) {
    const proof = readAdminProof();
    if (proof) headers.set(SESSION_PROOF_HEADER, proof);
  }
  if (!takesKey(path)) {
    headers.delete('authorization');
  } else if (!headers.has('authorization')) {
    const key = readAccessKey();
    if (key && key === refused?.key) skipped = refused.error;
    else if (key) headers.set('authorization', `Bearer ${(saved = key)}`);
  }
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers });
  } catch (error) {
    if (init.signal?.aborted) throw init.signal.reason;
    throw new ApiError(0, 'unreachable', `The companion could not be reached: ${(error as Error).message}`);
  }
  if (!response.ok) {
    const error = await errorFrom(response);
    if (error.status === 401 && saved !== null) refused = { key: saved, error };
    // Without the refused key the companion only says a key is needed; the refusal says why.
    if (error.status === 401 && skipped) throw new ApiError(skipped.status, skipped.code, skipped.message, skipped.param);
    throw error;
  }
  return response;
}

/** A JSON request to the companion. */
export async function request<T>(path: string, init: RequestInit = {}): Promise<T> {
  const response = await send(path, init);
  try {
    return (await response.json()) as T;
  } catch {
    throw new ApiError(response.status, 'invalid_response', `The companion sent a reply that is not JSON (${path}).`);
  }
}

/** Lines of a byte stream; cancelling the signal cancels the stream. */
async function* lines(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  const reader = body.getReader();
  const cancel = () => void reader.cancel(signal?.reason).catch(() => undefined);
  signal?.addEventListener('abort', cancel, { once: true });
  const decoder = new TextDecoder();
  let buffer = '';
  try {
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        signal?.throwIfAborted();
        throw new ApiError(0, 'stream_interrupted', `The connection to the companion was lost: ${(error as Error).message}`);
      }
      signal?.throwIfAborted();
      const { value, done } = chunk;
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const complete = buffer.split('\n');
      buffer = complete.pop() ?? '';
      for (const line of complete) yield line.endsWith('\r') ? line.slice(0, -1) : line;
    }
    buffer += decoder.decode();
    if (buffer) yield buffer;
  } finally {
    signal?.removeEventListener('abort', cancel);
    await reader.cancel().catch(() => undefined);
  }
}

/** The data of each server-sent event (`data:` lines joined, other fields ignored). */
export async function* events(body: ReadableStream<Uint8Array>, signal?: AbortSignal): AsyncGenerator<string> {
  let data: string[] = [];
  for await (const line of lines(body, signal)) {
    if (line === '') {
      if (data.length > 0) yield data.join('\n');
      data = [];
    } else if (line.startsWith('data:')) {
      data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    }
  }
  if (data.length > 0) yield data.join('\n');
}
