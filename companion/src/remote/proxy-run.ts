import type { IncomingMessage } from 'node:http';
import type { AgentRecord, AgentRun, AgentRunEvent, AgentRunRequest } from '#shared/api/agents.js';
import type { ErrorBody } from '#shared/api/errors.js';
import type { DriveEffects, DrivenOutcome } from '../agents/service.js';
import { HearthError } from '../errors.js';
import { readEvents } from './sse-reader.js';
import type { ChannelClient } from './tls-client.js';

/** How long a cancelled remote run may take to confirm before this side stops listening. */
const CANCEL_GRACE_MS = 10_000;

/** A paired host's agent as this companion lists it: `<host>/<agent>`, source remote. */
export function remoteRecord(host: string, record: AgentRecord): AgentRecord {
  return { ...record, id: `${host}/${record.id}`, source: 'remote', workspace: null };
}

/** Splits `<host>/<agent>`; undefined for any other id. */
export function remoteAgentId(id: string): { host: string; agent: string } | undefined {
  const match = /^([a-z0-9][a-z0-9._-]*)\/([A-Za-z0-9_-][A-Za-z0-9._-]*)$/.exec(id);
  return match ? { host: match[1]!, agent: match[2]! } : undefined;
}

/**
 * Starts the run on the host (streaming) and resolves with the open event stream; a refusal
 * (not granted, unknown agent, busy conversation, revoked device) is thrown before anything
 * is recorded here.
 */
export async function openRemoteRun(client: ChannelClient, host: string, agent: string, request: AgentRunRequest): Promise<IncomingMessage> {
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
 * Follows a host's run stream into a run of this companion: its deltas, tool calls and approval
 * requests are re-emitted (approvals are decided on the host), its end becomes this run's end,
 * and cancelling here sends the cancel to the host.
 */
export async function followRemoteRun(client: ChannelClient, host: string, response: IncomingMessage, effects: DriveEffects): Promise<DrivenOutcome> {
  let hostRun: string | undefined;
  let cancelSent = false;
  const cancel = () => {
    if (!hostRun || cancelSent) return;
    cancelSent = true;
    void client.json('POST', `/agents/runs/${hostRun}/cancel`).catch(() => undefined);
    setTimeout(() => response.destroy(), CANCEL_GRACE_MS).unref();
  };
  effects.signal.addEventListener('abort', cancel, { once: true });
  try {
    for await (const sent of readEvents(response)) {
      const event = JSON.parse(sent.data) as AgentRunEvent;
      if (event.type === 'run.created') {
        hostRun = event.run.id;
        if (effects.signal.aborted) cancel();
      } else if (event.type === 'run.completed' || event.type === 'run.failed' || event.type === 'run.cancelled') {
        return outcomeOf(event.run);
      } else {
        const { sequence: _sequence, run_id: _run, ...body } = event;
        effects.emit(body);
      }
    }
  } catch {
    // The connection was cut (revoked, host stopped, network): said below.
  } finally {
    effects.signal.removeEventListener('abort', cancel);
  }
  if (effects.signal.aborted) return { status: 'cancelled', outputText: '', steps: [], usage: zeroUsage() };
  return {
    status: 'failed',
    outputText: '',
    steps: [],
    usage: zeroUsage(),
    error: {
      code: 'remote_connection_lost',
      message: `The connection to "${host}" closed before the run ended (the host stopped, or revoked this device).${hostRun ? ` The run ${hostRun} on the host may go on.` : ''}`,
    },
  };
}

function outcomeOf(run: AgentRun): DrivenOutcome {
  const status = run.status === 'completed' || run.status === 'cancelled' ? run.status : 'failed';
  return { status, outputText: run.output_text, steps: run.steps, usage: run.usage, ...(run.error ? { error: run.error } : {}) };
}

function zeroUsage() {
  return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
}
