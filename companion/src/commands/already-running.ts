/** A second start on a data folder whose Hearth already runs: that Hearth is opened, not a second one started. */
import type { SignInLink } from '#shared/api/admin.js';
import { rememberSecret } from '../redaction.js';
import { adminClient } from './admin-client.js';

/** How long the running Hearth may take to answer before the second start gives up on it. */
const ANSWER_MS = 10_000;

/**
 * Finds the Hearth that holds the data folder (its server.json) and asks it for a one-time
 * sign-in link with the folder's admin credential, as `hearth open` does. Undefined when it does
 * not answer (still starting, or stopping): the caller then says the folder is in use.
 */
export async function runningHearth(dataDir: string): Promise<{ url: string; signIn: string } | undefined> {
  const client = adminClient(dataDir);
  if ('problem' in client) return undefined;
  try {
    const response = await client.fetch('/admin/session/links', { method: 'POST', signal: AbortSignal.timeout(ANSWER_MS) });
    if (!response.ok) return undefined;
    const link = (await response.json()) as SignInLink;
    // Printed only to a terminal; never to a log.
    rememberSecret(new URL(link.url).hash.slice(1));
    return { url: client.base, signIn: link.url };
  } catch {
    return undefined;
  }
}

/** Whether a Hearth answers at `url` (its /health: a status and a version), asked for at most ANSWER_MS. */
export async function hearthAnswersAt(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(ANSWER_MS) });
    const body = (await response.json()) as { status?: unknown; version?: unknown };
    return typeof body.version === 'string' && (body.status === 'ok' || body.status === 'error');
  } catch {
    return false;
  }
}
