import type { AgentInputMessage, AgentRecord } from '#shared/api/agents.js';
import type { AgentSettings, ConfigDocument } from '#shared/api/config.js';
import { HearthError } from '../errors.js';
import { imageFromUrl } from '../generation/image-input.js';
import type { HistoryItem, MediaPart } from '../inference/types.js';

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

/** Image and sound parts of every protocol (chat completions, Responses, Anthropic), as text shows them: never their bytes. */
const PLACEHOLDERS: Record<string, string> = { image_url: '[image]', input_image: '[image]', image: '[image]', input_audio: '[audio]' };

/**
 * Content parts' text in order, with `[image]` (or `[audio]`) for each image or sound, set off from
 * the words around it by a space: what a conversation's record, memory and recall keep of media.
 */
export function partsText(parts: readonly ({ type?: unknown; text?: unknown } | null)[]): string {
  let text = '';
  let afterMark = false;
  for (const part of parts) {
    const words = typeof part?.text === 'string' ? part.text : undefined;
    const mark = words === undefined && typeof part?.type === 'string' ? PLACEHOLDERS[part.type] : undefined;
    const piece = words ?? mark ?? '';
    if (!piece) continue;
    const gap = (mark !== undefined || afterMark) && text !== '' && !/\s$/.test(text) && !/^\s/.test(piece);
    text += gap ? ` ${piece}` : piece;
    afterMark = mark !== undefined;
  }
  return text;
}

/** A message's text: a string, or its parts' text with `[image]` for each image (the run itself gets the images). */
export function messageText(content: AgentInputMessage['content']): string {
  return typeof content === 'string' ? content : partsText(content);
}

/** Whether a message holds images. */
function hasImages(content: AgentInputMessage['content']): boolean {
  return typeof content !== 'string' && content.some((part) => part.type === 'image_url');
}

/** The caller's input as messages; it must hold a user message with some text or an image; images go in user messages only. */
export function inputMessages(input: string | AgentInputMessage[]): AgentInputMessage[] {
  const messages = typeof input === 'string' ? [{ role: 'user' as const, content: input }] : input;
  messages.forEach((message, index) => {
    if (message.role !== 'user' && hasImages(message.content))
      throw new HearthError('invalid_request_error', `input[${index}] is an ${message.role} message with an image: images go in user messages.`, {
        param: `input[${index}].content`,
      });
  });
  if (!messages.some((message) => message.role === 'user' && (messageText(message.content).trim() || hasImages(message.content)))) {
    throw new HearthError('invalid_request_error', 'input must contain a user message with some text or an image.', { param: 'input' });
  }
  // Text parts become one text; a message with images keeps its parts (each image at its place among them).
  return messages.map((message) => ({ role: message.role, content: hasImages(message.content) ? message.content : messageText(message.content) }));
}

/** The input as history: a user message's images become media at their places in its text (their bytes are read here; checked before the run starts). */
export function inputHistory(messages: AgentInputMessage[]): HistoryItem[] {
  return messages.map((message, index) => {
    if (message.role !== 'user') return { role: 'assistant', text: messageText(message.content), toolCalls: [] };
    if (typeof message.content === 'string') return { role: 'user', text: message.content };
    let text = '';
    const media: MediaPart[] = [];
    message.content.forEach((part, position) => {
      if (part.type === 'image_url') media.push(imageFromUrl(part.image_url.url, `input[${index}].content[${position}].image_url.url`, text.length));
      else text += part.text;
    });
    return { role: 'user', text, ...(media.length > 0 ? { media } : {}) };
  });
}
