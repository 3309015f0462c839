/** HTTP for `hearth pull`: deadlines, tokens, and plain explanations of network failures. */
import { HearthError } from '../errors.js';

export interface HttpContext {
  fetch: typeof fetch;
  endpoint: URL;
  /** HF_TOKEN; sent to the endpoint's origin only. */
  token: string | undefined;
  modelsDir: string;
  signal: AbortSignal | undefined;
  connectTimeoutMs: number;
}

export function headersFor(context: HttpContext, url: string, extra: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': 'hearth', ...extra };
  // The token only ever goes to the configured endpoint (fetch drops it on cross-origin redirects).
  if (context.token && new URL(url).origin === context.endpoint.origin) headers.authorization = `Bearer ${context.token}`;
  return headers;
}

/** fetch with a deadline for the answer (status and headers); network failures become a clear Error. */
export async function request(context: HttpContext, url: string, extra: Record<string, string>): Promise<Response> {
  const host = new URL(url).host;
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), context.connectTimeoutMs);
  const signal = context.signal ? AbortSignal.any([context.signal, deadline.signal]) : deadline.signal;
  try {
    return await context.fetch(url, { headers: headersFor(context, url, extra), signal, redirect: 'follow' });
  } catch (error) {
    if (context.signal?.aborted) throw abortError(context.signal);
    if (deadline.signal.aborted) {
      throw unreachable(host, `no answer within ${Math.round(context.connectTimeoutMs / 100) / 10} s`, context.modelsDir);
    }
    throw unreachable(host, networkReason(error), context.modelsDir);
  } finally {
    clearTimeout(timer);
  }
}

/** The hub (or a download host) did not answer: offline, DNS, refused, or no answer in time. */
export class UnreachableError extends Error {
  constructor(
    readonly host: string,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'UnreachableError';
  }
}

export function unreachable(host: string, reason: string, modelsDir: string): Error {
  return new UnreachableError(
    host,
    reason,
    `cannot reach ${host} (${reason}). Hearth needs internet for \`hearth pull\`; ` + `alternatively copy a .gguf into ${modelsDir}`,
  );
}

/** The Hugging Face address: the given one, else HF_ENDPOINT, else huggingface.co; refused unless http(s). */
export function hubEndpoint(endpoint: string | undefined = process.env.HF_ENDPOINT): URL {
  const text = (endpoint || 'https://huggingface.co').replace(/\/+$/, '');
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new HearthError('invalid_request_error', `The Hugging Face endpoint "${text}" is not an http(s) URL (HF_ENDPOINT).`, { param: 'endpoint' });
  }
  return new URL(text);
}

/** HF_TOKEN (or HUGGING_FACE_HUB_TOKEN), for gated and private repositories. */
export function hubToken(): string | undefined {
  return process.env.HF_TOKEN || process.env.HUGGING_FACE_HUB_TOKEN || undefined;
}

export function abortError(signal: AbortSignal): Error {
  return signal.reason instanceof Error ? signal.reason : new DOMException('The download was cancelled.', 'AbortError');
}

const REASONS: Record<string, string> = {
  ENOTFOUND: 'the host name could not be resolved',
  EAI_AGAIN: 'DNS lookup failed; the network may be down',
  EAI_FAIL: 'DNS lookup failed',
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  ENETUNREACH: 'network unreachable',
  ENETDOWN: 'network is down',
  EHOSTUNREACH: 'host unreachable',
  UND_ERR_SOCKET: 'the connection closed',
};

/** Digs the system error code out of fetch's `TypeError: fetch failed` (and AggregateErrors). */
export function networkReason(error: unknown): string {
  const queue: unknown[] = [error];
  let deepest = error instanceof Error ? error.message : String(error);
  for (let steps = 0; queue.length > 0 && steps < 20; steps++) {
    const current = queue.shift();
    if (!(current instanceof Error)) continue;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return REASONS[code] ?? (/CERT|TLS|SSL/.test(code) ? `TLS problem: ${code}` : code);
    if (current.message) deepest = current.message;
    if (current.cause !== undefined) queue.push(current.cause);
    if (current instanceof AggregateError) queue.push(...current.errors);
  }
  return deepest;
}

export function httpError(status: number, what: string, host: string): HearthError {
  if (status === 404) return new HearthError('model_not_found', `${what} was not found on ${host}.`, { param: 'spec' });
  if (status === 401 || status === 403) {
    return new HearthError('model_not_found', `${host} refused ${what} (HTTP ${status}): check the name; gated or private repositories need HF_TOKEN set.`, {
      param: 'spec',
    });
  }
  return new HearthError('provider_error', `${host} answered HTTP ${status} for ${what}.`);
}

/** Waits ms, or rejects at once when signal aborts. */
export function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
