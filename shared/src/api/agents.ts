/** Wire types of the agents family: definitions, runs, run events, approvals. */
import type { ToolApproval, ToolClass } from './config.js';
import type { ImageUrlPart, TextPart } from './openai.js';
import type { ToolInputSchema } from './bridge.js';
import type { RunFailureCode } from './failures.js';

/**
 * The one rule for agent ids, wherever one is given (configuration, access keys, memory,
 * /agents/{id} and /memory/agents/{id} paths, X-Service-Agent-Id, the app's agent editor):
 * 1-100 letters, digits, "-", "_" or ".", not starting with "." (so never "." or ".."). 100 is
 * the longest path segment the router takes, so every accepted id is reachable in a URL.
 */
export const AGENT_ID_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$';
export const AGENT_ID_RULE = '1-100 letters, digits, "-", "_" or ".", not starting with "."';

/** Ids an agent definition may not take: they are paths of the agents routes. */
export const RESERVED_AGENT_IDS = ['runs', 'approvals'] as const;

/** An agent as GET /agents and GET /agents/{id} show it (the configuration's record; never a secret). */
export interface AgentRecord {
  /** A local agent's id; `<host>/<agent>` for a paired host's; `cloud:<workspace>/<agent>` for a published cloud agent. */
  id: string;
  object: 'agent';
  /** Where it runs: here, on a paired host (over mutual TLS), or in a cloud workspace (A2A). */
  source: AgentSource;
  name: string;
  description: string | null;
  instructions: string | null;
  /** A local model id or `<provider>/<model>`; null when none is set (the agent cannot run). */
  model: string | null;
  /** Exact tool names and globs (`everything_*`). */
  tools: string[];
  tool_policy: Record<ToolClass, ToolApproval>;
  tool_overrides: Record<string, ToolApproval>;
  tool_choice: 'auto' | 'required';
  memory: { enabled: boolean; budget_tokens: number | null };
  workspace: string | null;
  max_steps: number;
  temperature: number | null;
  max_tokens: number | null;
}

/**
 * Where an agent runs: `local` on this machine; `remote` on a paired host, listed as
 * `<host>/<agent>` and reached over the secure channel (the code calls it a host agent); `cloud`
 * in a signed-in cloud workspace. On the wire `remote` names nothing else.
 */
export type AgentSource = 'local' | 'remote' | 'cloud';

export interface AgentList {
  object: 'list';
  data: AgentRecord[];
}

/** A message of a run's input: the caller's side of the conversation (a user message may hold images among its text). */
export interface AgentInputMessage {
  role: 'user' | 'assistant';
  content: string | (TextPart | ImageUrlPart)[];
}

/** POST /agents/{id}/run */
export interface AgentRunRequest {
  input: string | AgentInputMessage[];
  /** Continue this conversation's history; omitted starts a new one (its id is in the run). */
  conversation_id?: string;
  stream?: boolean;
}

export type AgentRunStatus = 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';

/** How a tool call was decided: by policy, by the owner, or by the approval timeout. */
export type ToolCallDecision = 'auto' | 'approved' | 'denied' | 'policy_denied' | 'timed_out' | 'cancelled' | 'unavailable';

export interface AgentToolCall {
  call_id: string;
  name: string;
  /** JSON text, as the model wrote it. */
  arguments: string;
  class: ToolClass | null;
  /** The policy that applied: auto, ask or deny (null for a tool the agent does not have). */
  policy: ToolApproval | null;
  decision: ToolCallDecision | null;
  approval_id: string | null;
  /** What the model was given back. */
  output: string | null;
  is_error: boolean;
}

/** One model call of a run and the tool calls it asked for. */
export interface AgentRunStep {
  index: number;
  text: string;
  tool_calls: AgentToolCall[];
  usage: AgentRunUsage;
  started_at: number;
  completed_at: number | null;
}

export interface AgentRunUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** Why a run failed: a code from the failure table (docs/errors.md) and words for people. */
export interface AgentRunError {
  code: RunFailureCode;
  message: string;
}

/** The run object (POST /agents/{id}/run without stream, GET /agents/runs/{run_id}). */
export interface AgentRun {
  id: string;
  object: 'agent.run';
  agent_id: string;
  conversation_id: string;
  model: string;
  status: AgentRunStatus;
  input: AgentInputMessage[];
  output_text: string;
  steps: AgentRunStep[];
  usage: AgentRunUsage;
  /** Unix seconds. */
  created_at: number;
  completed_at: number | null;
  error?: AgentRunError;
}

/** An artifact a cloud agent returned, as kept under the data folder's `artifacts/`. */
export interface RunArtifact {
  artifact_id: string;
  name: string;
  /** `<run_id>/<file>`, relative to `<data-dir>/artifacts/`. */
  path: string;
  media_type: string;
  size_bytes: number;
}

/** GET /agents/{id}/runs: newest first, without steps. */
export interface AgentRunList {
  object: 'list';
  data: AgentRunSummary[];
  has_more: boolean;
}

export type AgentRunSummary = Omit<AgentRun, 'steps'> & { steps: number };

/** The events of a run, as SSE (`event: <type>`, `data: <json>`) and from GET /agents/runs/{run_id}/events. */
export type AgentRunEvent =
  | { type: 'run.created'; sequence: number; run_id: string; run: AgentRun }
  | { type: 'message.delta'; sequence: number; run_id: string; step: number; delta: string }
  | { type: 'tool_call.created'; sequence: number; run_id: string; step: number; call_id: string; name: string; arguments: string }
  | {
      type: 'tool_call.approval_required';
      sequence: number;
      run_id: string;
      step: number;
      approval_id: string;
      call_id: string;
      name: string;
      arguments: string;
      /** Unix seconds: no decision by then counts as deny. */
      expires_at: number;
    }
  | { type: 'tool_call.completed'; sequence: number; run_id: string; step: number; call_id: string; name: string; output: string; is_error: boolean }
  /** A cloud agent's artifact, stored in the data folder (`path` is under `artifacts/`). */
  | { type: 'artifact.created'; sequence: number; run_id: string; artifact: RunArtifact }
  | { type: 'run.completed'; sequence: number; run_id: string; run: AgentRun }
  | { type: 'run.failed'; sequence: number; run_id: string; run: AgentRun; error: AgentRunError }
  | { type: 'run.cancelled'; sequence: number; run_id: string; run: AgentRun };

export type AgentRunEventType = AgentRunEvent['type'];

/** Every run event type, for code that must handle each one (and the docs test that lists them). */
export const AGENT_RUN_EVENT_TYPES = [
  'run.created',
  'message.delta',
  'tool_call.created',
  'tool_call.approval_required',
  'tool_call.completed',
  'artifact.created',
  'run.completed',
  'run.failed',
  'run.cancelled',
] as const satisfies readonly AgentRunEventType[];

/** Fails to compile when an event type is added to the union but not to the list above. */
export type UnlistedAgentRunEventType = Exclude<AgentRunEventType, (typeof AGENT_RUN_EVENT_TYPES)[number]>;
const everyEventTypeListed: UnlistedAgentRunEventType extends never ? true : false = true;
void everyEventTypeListed;

/** An event before the run numbers it. */
export type AgentRunEventBody = Unnumbered<AgentRunEvent>;
type Unnumbered<Event> = Event extends unknown ? Omit<Event, 'sequence' | 'run_id'> : never;

/** GET /agents/runs/{run_id}/events?after=N */
export interface AgentRunEventList {
  object: 'list';
  /** At most 1000 events, oldest first; with `has_more`, ask again after the last one's sequence. */
  data: AgentRunEvent[];
  has_more: boolean;
  /** The run's status now: when it is final, no event will follow. */
  run_status: AgentRunStatus;
}

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'timed_out' | 'cancelled';

/** A tool call waiting for the machine owner (GET /agents/approvals). */
export interface AgentApproval {
  id: string;
  object: 'agent.approval';
  run_id: string;
  agent_id: string;
  call_id: string;
  name: string;
  arguments: string;
  class: ToolClass;
  status: ApprovalStatus;
  reason: string | null;
  created_at: number;
  expires_at: number;
  decided_at: number | null;
}

export interface AgentApprovalList {
  object: 'list';
  data: AgentApproval[];
}

/** POST /agents/approvals/{approval_id} */
export interface AgentApprovalDecision {
  decision: 'approve' | 'deny';
  reason?: string;
}

/** One tool of the whole catalog as the agent editor sees it (GET /admin/tools). */
export interface AgentCatalogTool {
  name: string;
  description: string;
  class: ToolClass;
  /** The MCP service it comes from; null for Hearth's built-in tools. */
  service: string | null;
  /** Built-in tools that act on this machine (files, shell): never offered to external clients. */
  host_only: boolean;
  input_schema: ToolInputSchema;
}

export interface AgentCatalogToolList {
  object: 'list';
  data: AgentCatalogTool[];
}
