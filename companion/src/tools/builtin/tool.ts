import type { ToolInputSchema } from '#shared/api/bridge.js';
import type { ToolClass } from '#shared/api/config.js';
import type { MemorySearchItem, MemorySearchScope } from '#shared/api/memory.js';
import { failure, type TextContent, type ToolResult } from '../result.js';
import type { ProcessLedger } from './containment.js';

/** What a built-in tool answers: text blocks, failures as data. */
export type BuiltinResult = ToolResult<TextContent>;

/**
 * What the memory tools need of memory, handed in by whoever runs the tool (the agent run), so
 * that tools never import the memory store: a search of one material, and pinning a fact.
 */
export interface MemoryAccess {
  search(agentId: string, query: string, scope: MemorySearchScope, limit: number): Promise<MemorySearchItem[]>;
  editor: { pin(agentId: string, text: string): { id: number; merged: boolean } };
}

/** What a built-in tool runs with: the agent it acts for and that agent's limits. */
export interface ToolContext {
  /** Memory tools only ever reach this agent's namespace. */
  agentId: string;
  /** The real path of the agent's workspace; null when it has none (file and shell tools refuse). */
  workspace: string | null;
  /** Aborted when the run is cancelled: a running command is killed. */
  signal: AbortSignal;
  memory: MemoryAccess;
  /** The longest a shell command may run, in seconds. */
  shellTimeoutSeconds: number;
  /** Records the markers of running shell calls (see containment.ts); none in tests that need no crash recovery. */
  processes?: ProcessLedger;
}

/**
 * A tool Hearth itself provides. The catalog lists it under a protected name (no MCP service
 * tool can take it) and never offers it to external callers; agent runs call `run`.
 */
export interface BuiltinTool {
  name: string;
  description: string;
  inputSchema: ToolInputSchema;
  class: ToolClass;
  /** Acts on this machine (its files, its processes): for Hearth's own agents only, whatever any policy says. */
  hostOnly: boolean;
  /** Whether the tool needs the agent's workspace (file and shell tools). */
  needsWorkspace: boolean;
  run(args: Record<string, unknown>, context: ToolContext): Promise<BuiltinResult>;
}

/** A tool's arguments: these fields and no other, the ones named in `required` among them. */
export function toolInput(required: string[], properties: Record<string, unknown>): ToolInputSchema {
  return { type: 'object', additionalProperties: false, ...(required.length > 0 ? { required } : {}), properties };
}

/** Runs a tool body; a thrown error becomes a tool error whose text is the error's message. */
export async function attempt(work: () => Promise<BuiltinResult> | BuiltinResult): Promise<BuiltinResult> {
  try {
    return await work();
  } catch (error) {
    return failure(error instanceof Error ? error.message : String(error));
  }
}

const CANCELLED = 'The run was cancelled; the tool stopped.';

/** Throws the run's cancellation as a tool error, so a long walk stops at its next step. */
export function checkCancelled(signal: AbortSignal): void {
  if (signal.aborted) throw new ToolError(CANCELLED);
}

/**
 * `work`, unless the run is cancelled first: then a tool error at once, and whatever `work`
 * still does is left to finish on its own (its result is dropped).
 */
export function untilCancelled<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(new ToolError(CANCELLED));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new ToolError(CANCELLED));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A string argument, or a ToolError naming it. */
export function stringArgument(args: Record<string, unknown>, name: string, options: { optional?: boolean; fallback?: string } = {}): string {
  const value = args[name];
  if (value === undefined && (options.optional || options.fallback !== undefined)) return options.fallback ?? '';
  if (typeof value !== 'string') throw new ToolError(`${name} must be a string.`);
  return value;
}

/** A failure the model should read as it is (bad arguments, a path outside the workspace). */
export class ToolError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolError';
  }
}
