import type { AgentRun } from '#shared/api/agents.js';
import type { MemoryContextItem } from '#shared/api/memory.js';
import type { AgentSettings, ConfigDocument } from '#shared/api/config.js';
import type { HistoryItem } from '../inference/types.js';
import type { Logger } from '../logger.js';
import type { MemoryService } from '../memory/service.js';
import type { MemoryAccess } from '../tools/builtin/tool.js';
import { inputHistory } from './definitions.js';
import type { RunStore } from './store.js';

/** What agent runs use of memory: recall, buffering an exchange, and what the memory tools reach. */
export type AgentMemory = Pick<MemoryService, 'recall' | 'buffer'> & MemoryAccess;

/**
 * The link between agents and memory (the one place agents reach memory/): recall before a run,
 * and after it the exchange continues its conversation and is buffered into the agent's memory.
 */
export class MemoryLink {
  constructor(
    private readonly memory: AgentMemory,
    private readonly store: RunStore,
    private readonly config: () => ConfigDocument,
    private readonly log: Logger,
  ) {}

  /** What the memory tools of a run reach: this agent's searches and pins. */
  get tools(): MemoryAccess {
    return this.memory;
  }

  /** What memory recalls for this input, within the agent's budget; nothing when its memory is off or recall fails. */
  recall(agent: AgentSettings, query: string): MemoryContextItem[] {
    if (!agent.memory.enabled) return [];
    try {
      return this.memory.recall(agent.id, query, agent.memory.budget_tokens).items;
    } catch (error) {
      this.log.warn({ err: error, agent: agent.id }, 'memory recall failed; the run goes on without memory');
      return [];
    }
  }

  /** A completed run continues its conversation's history and is buffered into the agent's memory. */
  remember(run: AgentRun, messages: HistoryItem[], query: string): void {
    try {
      this.store.appendMessages(run.agent_id, run.conversation_id, run.id, [...inputHistory(run.input), ...messages]);
      const agent = this.config().agents.find((candidate) => candidate.id === run.agent_id);
      if (agent?.memory.enabled !== false)
        this.memory.buffer({ agentId: run.agent_id, conversationId: run.conversation_id, user: query, assistant: run.output_text });
    } catch (error) {
      this.log.error({ err: error, run: run.id }, 'recording the run in its conversation failed');
    }
  }

  /** An API exchange named by X-Service-Agent-Id: a turn of that agent's conversation, and a memory signal. */
  attribute(agent: AgentSettings, conversationId: string, user: string, assistant: string): void {
    this.store.appendMessages(agent.id, conversationId, null, [
      { role: 'user', text: user },
      { role: 'assistant', text: assistant, toolCalls: [] },
    ]);
    if (agent.memory.enabled) this.memory.buffer({ agentId: agent.id, conversationId, user, assistant });
  }
}
