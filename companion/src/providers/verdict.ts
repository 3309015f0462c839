import type { Endpoint, Pool } from './pool.js';
import { reasonInWords } from './wire.js';

/**
 * The one classifier of a request's attempt on an endpoint: what the endpoint's circuit learns
 * from it, and whether the request moves on to another endpoint or ends with what it has.
 * client.ts's retry loop asks it after every attempt; the table is unit-tested as it stands here.
 *
 * | attempt                                   | endpoint learns            | retryable |
 * |-------------------------------------------|----------------------------|-----------|
 * | aborted by the client (or shutdown)       | nothing                    | no        |
 * | network error or timeout before an answer | failed (not reachable: …)  | yes       |
 * | 429 (with or without Retry-After)         | paused for Retry-After (1) | yes       |
 * | 503 with Retry-After                      | paused for Retry-After     | yes       |
 * | other 5xx                                 | failed (answered 5xx)      | yes       |
 * | 2xx, 3xx, 4xx                             | succeeded                  | no        |
 * | a streamed answer cut off after it began  | failed (cut off)           | no        |
 *
 * A retryable attempt fails over to another endpoint when the request may move (not hosted
 * media's jobs, which stay on the server that made them) and another endpoint takes requests;
 * otherwise the request gives up: the answer goes back as it is (a 429's Retry-After with it),
 * or provider_unreachable says why. The same endpoint is never tried again for one request: its
 * circuit or its pause decides when it gets requests again, and a reply that began is never
 * repeated.
 */

export type Attempt =
  | { kind: 'aborted' }
  /** send() could not get an answer: `reason` is its cause (ECONNREFUSED, "no answer within 200 ms", …). */
  | { kind: 'unreachable'; reason: string }
  /** An answer's status, with its Retry-After in seconds when it had a readable one. */
  | { kind: 'answered'; status: number; retryAfter: number | undefined }
  | { kind: 'cut_off' };

/** What an attempt tells the endpoint's circuit. */
export type EndpointNews = { kind: 'nothing' } | { kind: 'succeeded' } | { kind: 'failed'; reason: string } | { kind: 'paused'; seconds: number };

export interface Verdict {
  endpoint: EndpointNews;
  /** Another endpoint could answer where this one did not. */
  retryable: boolean;
  action: 'failover' | 'give_up';
}

/** `canMove`: the request may fail over and another endpoint takes requests now. */
export function classifyAttempt(attempt: Attempt, canMove: boolean): Verdict {
  const endpoint = newsOf(attempt);
  const retryable = endpoint.kind === 'paused' || (endpoint.kind === 'failed' && attempt.kind !== 'cut_off');
  return { endpoint, retryable, action: retryable && canMove ? 'failover' : 'give_up' };
}

function newsOf(attempt: Attempt): EndpointNews {
  switch (attempt.kind) {
    case 'aborted':
      return { kind: 'nothing' };
    case 'unreachable':
      return { kind: 'failed', reason: `not reachable (${reasonInWords(attempt.reason)})` };
    case 'cut_off':
      return { kind: 'failed', reason: 'a reply was cut off' };
    case 'answered': {
      const { status, retryAfter } = attempt;
      if (status === 429 || (status === 503 && retryAfter !== undefined)) return { kind: 'paused', seconds: retryAfter ?? 1 };
      if (status >= 500) return { kind: 'failed', reason: `answered with an error (${status})` };
      return { kind: 'succeeded' };
    }
  }
}

/** Puts what an attempt told into the endpoint's circuit. */
export function learn(pool: Pool, endpoint: Endpoint, news: EndpointNews): void {
  if (news.kind === 'succeeded') pool.succeeded(endpoint);
  else if (news.kind === 'failed') pool.failed(endpoint, news.reason);
  else if (news.kind === 'paused') pool.rateLimited(endpoint, news.seconds);
}
