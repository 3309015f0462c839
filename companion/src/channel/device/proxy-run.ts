import type { IncomingMessage } from 'node:http';
import type { AgentRecord, AgentRunRequest } from '#shared/api/agents.js';
import type { ErrorBody } from '#shared/api/errors.js';
import type { RunFailureCode } from '#shared/api/failures.js';
import type { DriveEffects, DrivenOutcome } from '../../agents/driven-run.js';
import { HearthError } from '../../errors.js';
import { runFailure } from '../../failures.js';
import { relayedEvent } from './relayed-events.js';
import { readEvents } from '../../sse-reader.js';
import type { ChannelClient } from './tls-client.js';

/** How long a run cancelled on the host may take to confirm before this side stops listening. */
const CANCEL_GRACE_MS = 10_000;

/** A paired host's agent as this companion lists it: `<host>/<agent>`, with `source: "remote"` (the wire's word for a paired host's agent). */
export function hostAgentRecord(host: string, record: AgentRecord): AgentRecord {
  return { ...record, id: `${host}/${record.id}`, source: 'remote', workspace: null };
}

/**
 * Starts the run on the host (streaming) and resolves with the open event stream; a refusal
 * (not granted, unknown agent, busy conversation, revoked device) is thrown before anything
 * is recorded here.
 */
export async function openHostRun(client: ChannelClient, host: string, agent: string, request: AgentRunRequest): Promise<IncomingMessage> {
  const body = { input: request.input, stream: true, ...(request.conversation_id ? { conversation_id: request.conversation_id } : {}) };
  const response = await client.request('POST', `/agents/${encodeURIComponent(agent)}/run`, { body, accept: 'text/event-stream' });
  if (response.statusCode === 200) return response;
  let text = '';
  for await (const chunk of response) text += (chunk as Buffer).toString();
  let message = `HTTP ${response.statusCode}`;
  try {
    message = (JSON.parse(text) as ErrorBody).error.message;
  } catch {
    // Not the error shape: the status says enough.
  }
  if (response.statusCode === 401)
    throw new HearthError(
      'remote_host_not_paired',
      `The host "${host}" no longer accepts this device (revoked there, or paired again since): ${message} Pair again to use it.`,
    );
  throw new HearthError('remote_host_refused', `The host "${host}" refused to run "${agent}": ${message}`);
}

/**
 * Waits before each attempt to pick a cut stream up again: a network blip, or the host restarting,
 * which takes a few seconds from its bundle and longer from sources on a busy machine (about 30 s in all).
 */
const RESUME_WAITS_MS = [500, 1000, 2000, 4000, 8000, 15_000];

/** Where following a host's run stands. */
interface Following {
  hostRun?: string;
  /** The host's sequence number of the last event relayed. */
  last: number;
  response: IncomingMessage;
  cancelSent: boolean;
}

/**
 * Follows a host's run stream into a run of this companion: its deltas, tool calls and approval
 * requests are re-emitted (approvals are decided on the host), its end becomes this run's end,
 * and cancelling here sends the cancel to the host. A stream cut before the end is picked up
 * again from the last event (GET /agents/runs/{id}/events?after=N) a few times; a host that
 * then refuses this device (revoked) ends the run with that reason.
 */
export async function followHostRun(client: ChannelClient, host: string, response: IncomingMessage, effects: DriveEffects): Promise<DrivenOutcome> {
  const following: Following = { last: 0, response, cancelSent: false };
  const cancel = () => {
    if (!following.hostRun || following.cancelSent) return;
    following.cancelSent = true;
    void client.json('POST', `/agents/runs/${following.hostRun}/cancel`).catch(() => undefined);
    setTimeout(() => following.response.destroy(), CANCEL_GRACE_MS).unref();
  };
  effects.signal.addEventListener('abort', cancel, { once: true });
  try {
    for (let attempt = 0; ; attempt++) {
      const ended = await relay(following, effects, cancel);
      if (ended) return ended;
      if (effects.signal.aborted || !following.hostRun || attempt >= RESUME_WAITS_MS.length) break;
      await new Promise((resolve) => setTimeout(resolve, RESUME_WAITS_MS[attempt]));
      // Unreachable: try again; refused (revoked) or another certificate: that is the end.
      const resumed = await resume(client, host, following).catch((error: unknown) =>
        error instanceof HearthError && error.code !== 'remote_host_unreachable' ? error : undefined,
      );
      if (resumed instanceof HearthError) return failed(resumed.code, resumed.message);
      if (resumed) following.response = resumed;
    }
  } finally {
    effects.signal.removeEventListener('abort', cancel);
  }
  if (effects.signal.aborted) return { status: 'cancelled', outputText: '', steps: [], usage: zeroUsage() };
  return failed(
    'remote_connection_lost',
    `The connection to "${host}" closed before the run ended and could not be picked up again.${following.hostRun ? ` The run ${following.hostRun} on the host may go on.` : ''}`,
  );
}

/**
 * Relays one response's events, each rebuilt from the fields this side knows (relayedEvent: an
 * unknown type, a malformed field or an artifact is dropped); resolves with the outcome at the
 * host's end, or undefined when the stream stops first.
 */
async function relay(following: Following, effects: DriveEffects, cancel: () => void): Promise<DrivenOutcome | undefined> {
  try {
    for await (const sent of readEvents(following.response)) {
      const event = relayedEvent(sent.data);
      if (!event || event.sequence <= following.last) continue;
      following.last = event.sequence;
      if (event.kind === 'created') {
        // The host names its run once; a second run.created cannot re-point cancel and resume elsewhere.
        following.hostRun ??= event.hostRun;
        if (effects.signal.aborted) cancel();
      } else if (event.kind === 'end') {
        return event.outcome;
      } else {
        effects.emit(event.body);
      }
    }
  } catch {
    // The connection was cut (revoked, host stopped, network): the caller tries to pick it up again.
  }
  return undefined;
}

/** Asks the host for the run's events after the last one relayed; undefined when it cannot be reached. */
async function resume(client: ChannelClient, host: string, following: Following): Promise<IncomingMessage | undefined> {
  const response = await client.request('GET', `/agents/runs/${following.hostRun}/events?after=${following.last}`, { accept: 'text/event-stream' });
  if (response.statusCode === 200) return response;
  response.resume();
  if (response.statusCode === 401)
    throw new HearthError(
      'remote_host_not_paired',
      `The host "${host}" stopped accepting this device during the run (revoked there). Pair again to use it; the run ${following.hostRun} on the host may go on.`,
    );
  return undefined;
}

function failed(code: RunFailureCode, message: string): DrivenOutcome {
  return { status: 'failed', outputText: '', steps: [], usage: zeroUsage(), error: runFailure(code, message) };
}

function zeroUsage() {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}
