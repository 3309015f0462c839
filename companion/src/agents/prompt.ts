import type { MemoryContextItem } from '#shared/api/memory.js';
import type { AgentSettings } from '#shared/api/config.js';
import type { HistoryItem } from '../inference/types.js';

/**
 * The run's system message: the agent's instructions, then what memory recalled for this
 * input (already within the agent's token budget), marked as recalled so the model can weigh it.
 */
export function systemMessage(agent: AgentSettings, recalled: MemoryContextItem[]): HistoryItem[] {
  const parts: string[] = [];
  if (agent.instructions?.trim()) parts.push(agent.instructions.trim());
  if (recalled.length > 0) {
    const items = recalled.map((item) => `- ${item.date && !item.text.startsWith('[') ? `[${item.date.slice(0, 10)}] ` : ''}${item.text}`);
    parts.push(`Recalled from your memory of earlier conversations (may be incomplete):\n${items.join('\n')}`);
  }
  return parts.length > 0 ? [{ role: 'system', text: parts.join('\n\n') }] : [];
}
