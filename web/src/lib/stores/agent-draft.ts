/** The agent editor's form: a definition as editable fields, and back into the configuration's shape. */
import type { AgentRecord } from '#shared/api/agents.js';
import type { AgentSettings, ToolApproval, ToolClass } from '#shared/api/config.js';
import type { ModelRecord } from '#shared/api/openai.js';

export const TOOL_CLASSES: readonly ToolClass[] = ['read', 'write', 'exec', 'network'];
export const APPROVALS: readonly ToolApproval[] = ['auto', 'ask', 'deny'];

export interface AgentDraft {
  id: string;
  name: string;
  description: string;
  instructions: string;
  model: string;
  /** Exact names and globs. */
  tools: string[];
  tool_policy: Record<ToolClass, ToolApproval>;
  tool_overrides: Record<string, ToolApproval>;
  tool_choice: 'auto' | 'required';
  memory_enabled: boolean;
  /** None: the memory section's budget. */
  budget_tokens: number | null;
  workspace: string;
  max_steps: number;
  /** None: the model's default. */
  temperature: number | null;
  /** Most tokens one model call may write; none: up to the context. */
  max_tokens: number | null;
}

/**
 * The model a new agent starts with: the one loaded on this machine (the first, when several
 * are), else the only one there is; none when the choice is the user's to make.
 */
export function defaultModel(models: ModelRecord[]): string {
  const local = models.filter((model) => model.source !== 'provider' && (!model.capabilities?.length || model.capabilities.includes('chat')) && !model.error);
  const loaded = local.find((model) => model.loaded);
  if (loaded) return loaded.id;
  const chat = models.filter((model) => (!model.capabilities?.length || model.capabilities.includes('chat')) && !model.error);
  return chat.length === 1 ? chat[0]!.id : '';
}

export function draftOf(record?: AgentRecord): AgentDraft {
  return {
    id: record?.id ?? '',
    name: record && record.name !== record.id ? record.name : '',
    description: record?.description ?? '',
    instructions: record?.instructions ?? '',
    model: record?.model ?? '',
    tools: [...(record?.tools ?? [])],
    tool_policy: { ...(record?.tool_policy ?? { read: 'auto', write: 'deny', exec: 'deny', network: 'ask' }) },
    tool_overrides: { ...(record?.tool_overrides ?? {}) },
    tool_choice: record?.tool_choice ?? 'auto',
    memory_enabled: record?.memory.enabled ?? true,
    budget_tokens: record?.memory.budget_tokens ?? null,
    workspace: record?.workspace ?? '',
    max_steps: record?.max_steps ?? 30,
    temperature: record?.temperature ?? null,
    max_tokens: record?.max_tokens ?? null,
  };
}

/** The definition to apply: empty fields are left out, so the companion's defaults apply. */
export function settingsOf(draft: AgentDraft): Partial<AgentSettings> & { id: string } {
  const text = (value: string) => (value.trim() ? value.trim() : undefined);
  const number = (value: number | null | undefined) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
  const settings: Partial<AgentSettings> & { id: string } = {
    id: draft.id.trim(),
    name: text(draft.name),
    description: text(draft.description),
    instructions: draft.instructions.trim() ? draft.instructions : undefined,
    model: text(draft.model),
    tools: [...new Set(draft.tools)],
    tool_policy: { ...draft.tool_policy },
    tool_overrides: Object.fromEntries(Object.entries(draft.tool_overrides).filter(([name]) => draft.tools.some((pattern) => covers(pattern, name)))),
    tool_choice: draft.tool_choice,
    memory: { enabled: draft.memory_enabled, ...(number(draft.budget_tokens) !== undefined ? { budget_tokens: number(draft.budget_tokens) } : {}) },
    workspace: text(draft.workspace),
    max_steps: draft.max_steps,
    temperature: number(draft.temperature),
    max_tokens: number(draft.max_tokens),
  };
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined)) as Partial<AgentSettings> & { id: string };
}

/** Whether a pattern of `tools` (an exact name or a glob with `*` and `?`) covers a tool name. */
export function covers(pattern: string, name: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern === name;
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`).test(name);
}
