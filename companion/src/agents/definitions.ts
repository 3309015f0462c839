import type { AgentInputMessage, AgentRecord } from '#shared/api/agents.js';
import type { AgentSettings, ConfigDocument } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import type { HistoryItem } from '../inference/types.js';

/** An agent definition as GET /agents shows it: every setting, nothing secret (agents hold no secrets). */
export function agentRecord(agent: AgentSettings): AgentRecord {
  return {
    id: agent.id,
    object: 'agent',
    source: 'local',
    name: agent.name ?? agent.id,
    description: agent.description ?? null,
    instructions: agent.instructions ?? null,
    model: agent.model ?? null,
    tools: agent.tools,
    tool_policy: agent.tool_policy,
    tool_overrides: agent.tool_overrides,
    tool_choice: agent.tool_choice,
    memory: { enabled: agent.memory.enabled, budget_tokens: agent.memory.budget_tokens ?? null },
    workspace: agent.workspace ?? null,
    max_steps: agent.max_steps,
    temperature: agent.temperature ?? null,
    max_tokens: agent.max_tokens ?? null,
  };
}

/** The configured agent with this id, or 400 agent_not_found naming where the id came from. */
export function findAgent(config: ConfigDocument, id: string, param = 'id'): AgentSettings {
  const agent = config.agents.find((candidate) => candidate.id === id);
  if (!agent) throw new HearthError('agent_not_found', `No agent has the id "${id}". List agents with GET /agents.`, { param });
  return agent;
}

/** A message's text: a string or text parts (other part types are refused by the route's schema). */
export function messageText(content: AgentInputMessage['content']): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/** The caller's input as messages; it must hold some user text. */
export function inputMessages(input: string | AgentInputMessage[]): AgentInputMessage[] {
  const messages = typeof input === 'string' ? [{ role: 'user' as const, content: input }] : input;
  if (!messages.some((message) => message.role === 'user' && messageText(message.content).trim())) {
    throw new HearthError('invalid_request_error', 'input must contain a user message with some text.', { param: 'input' });
  }
  return messages.map((message) => ({ role: message.role, content: messageText(message.content) }));
}

export function inputHistory(messages: AgentInputMessage[]): HistoryItem[] {
  return messages.map((message) =>
    message.role === 'user' ? { role: 'user', text: messageText(message.content) } : { role: 'assistant', text: messageText(message.content), toolCalls: [] },
  );
}
