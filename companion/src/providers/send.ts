import { redact } from '../redaction.js';
import { HearthError } from '../errors.js';
import type { Prepared, ProviderConfig } from './prepare.js';
import { networkReason } from './wire.js';

/** A provider request's whole time, unless the provider sets timeout_ms. */
export const DEFAULT_TIMEOUT_MS = 600_000;
/** A streamed answer's first bytes must come within this. */
export const FIRST_BYTE_TIMEOUT_MS = 30_000;

/** fetch with the provider's limits and no redirects; network failures and timeouts become provider_unreachable. */
export async function send(
  fetchImpl: typeof fetch,
  provider: ProviderConfig,
  prepared: Prepared,
  url: URL,
  init: RequestInit,
  signal: AbortSignal | undefined,
  firstByteLimit: boolean,
  totalMs = provider.timeout_ms ?? DEFAULT_TIMEOUT_MS,
): Promise<Response> {
  const host = prepared.base.host;
  if (signal?.aborted) throw signal.reason;
  // One controller per request rather than AbortSignal.any/timeout, whose Node
  // versions have had leaks and timeout signals collected before they fired.
  const controller = new AbortController();
  let expired: number | undefined;
  const expire = (ms: number): void => {
    if (controller.signal.aborted) return;
    expired = ms;
    controller.abort(new DOMException(`The provider did not answer within ${ms} ms.`, 'TimeoutError'));
  };
  const firstByteMs = Math.min(totalMs, FIRST_BYTE_TIMEOUT_MS);
  // The whole-request timer keeps running while the body streams; unref'd, it never holds the process open.
  const total = setTimeout(() => expire(totalMs), totalMs);
  total.unref();
  const firstByte = firstByteLimit ? setTimeout(() => expire(firstByteMs), firstByteMs) : undefined;
  const onAbort = (): void => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    // No redirects: a redirect to another origin would carry the secret headers along.
    return await fetchImpl(url, { ...init, redirect: 'error', signal: controller.signal });
  } catch (error) {
    clearTimeout(total);
    signal?.removeEventListener('abort', onAbort);
    if (signal?.aborted) throw signal.reason;
    if (expired !== undefined) {
      const limit = expired < 1000 ? `${expired} ms` : `${Math.round(expired / 100) / 10} s`;
      throw new HearthError('provider_unreachable', `Provider "${provider.name}" (${host}) did not answer within ${limit}.`, {
        cause: `no answer within ${limit}`,
      });
    }
    const reason = redact(networkReason(error), prepared.secrets);
    throw new HearthError('provider_unreachable', `Provider "${provider.name}" (${host}) could not be reached: ${reason}.`, { cause: reason });
  } finally {
    clearTimeout(firstByte);
  }
}
