/** One reply of a conversation, from a model or from an agent, written into the reply as it comes. */
import type { Conversation, MessageImage, StoredMessage } from '$lib/storage/conversations';
import { dataUrlOf, readMedia } from '$lib/storage/media';
import type { AgentInputMessage, AgentRecord } from '#shared/api/agents.js';
import { replyText, runAgentTurn } from './agent-reply';
import { withPlaceholders } from './attachments';
import { generate, questionContent, type GenerateMessage, type ModelRef } from './backends';
import type { ContextMessage, FitResult } from './context';
import { charsOf, ContextOverflow } from './history';
import { withSounds } from './sounds';
import { effortFor } from './thinking';

/** What one request sends, after the overflow policy. */
export type Plan = FitResult & { rate: number; window: number | null; budget: number };

export interface Turn {
  conversation: Conversation;
  /** The reply being written (the last message). */
  reply: StoredMessage;
  signal: AbortSignal;
  /** Text arrived: the store saves now and then. */
  progress(): void;
  /** Fits the conversation into `window` with the system text and other fixed tokens before it. */
  plan(window: number | null, fixedText: string, fixedTokens?: number): Plan;
}

const sameIds = (a: string[], b: string[]) => a.length === b.length && a.every((id, index) => id === b[index]);

/**
 * A kept message as a request sends it: with its images as data URLs to a model that reads them
 * (`sees`), else (and for an image no longer stored) with a placeholder in the text for each.
 */
async function requestMessage({ role, content }: ContextMessage, images: MessageImage[], sees: boolean): Promise<GenerateMessage> {
  if (images.length === 0) return { role, content };
  if (!sees) return { role, content: withPlaceholders(content, images.length) };
  const blobs = await Promise.all(images.map((image) => readMedia(image.id)));
  const urls = await Promise.all(blobs.filter((blob) => blob !== null).map(dataUrlOf));
  return { role, content: withPlaceholders(content, images.length - urls.length), images: urls };
}

/**
 * A model's reply, with the conversation's system prompt and sampling settings. A reasoning model's
 * (`thinks`) thought goes into the reply apart from its text, with how long it took; earlier
 * replies are sent as their text only. The questions' images go to a model that reads them
 * (`sees`), their recordings to one that hears (`hears`); another gets a placeholder for each.
 */
export async function modelTurn(turn: Turn, ref: ModelRef, window: number | null, label: string, thinks = false, sees = false, hears = false): Promise<void> {
  const { conversation, reply, signal } = turn;
  const { settings } = conversation;
  const system = settings.systemPrompt.trim();
  const plan = turn.plan(window, system);
  if (!plan.fits) throw new ContextOverflow(plan, plan.window!, plan.budget, label);
  reply.omitted = plan.omitted;
  const stored = new Map(conversation.messages.map((message) => [message.id, message]));
  const kept = await Promise.all(
    plan.kept.map(async (message) => {
      const saved = stored.get(message.id);
      return withSounds(await requestMessage(message, saved?.images ?? [], sees), saved?.sounds ?? [], hears);
    }),
  );
  const messages: GenerateMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), ...kept];
  let firstToken: number | null = null;
  let thoughtStarted: number | null = null;
  Object.assign(reply, { reasoning: undefined, reasoningMs: undefined });
  const thoughtEnds = () => {
    if (thoughtStarted !== null && reply.reasoningMs === undefined) reply.reasoningMs = Math.round(performance.now() - thoughtStarted);
  };
  const result = await generate({
    model: ref,
    messages,
    temperature: settings.temperature ?? undefined,
    top_p: settings.topP ?? undefined,
    max_tokens: settings.maxTokens ?? undefined,
    reasoning_effort: thinks ? effortFor(settings) : undefined,
    signal,
    onDelta: (text) => {
      firstToken ??= performance.now();
      thoughtEnds();
      reply.content += text;
      turn.progress();
    },
    onReasoning: (text) => {
      firstToken ??= performance.now();
      thoughtStarted ??= performance.now();
      reply.reasoning = (reply.reasoning ?? '') + text;
      turn.progress();
    },
  });
  // A reply that was all thought (cut at the length limit) thought until it ended.
  thoughtEnds();
  const seconds = firstToken === null ? 0 : (performance.now() - firstToken) / 1000;
  reply.finishReason = result.finishReason;
  reply.stats = {
    promptTokens: result.promptTokens,
    completionTokens: result.completionTokens,
    tokensPerSecond: result.tokensPerSecond ?? (result.completionTokens && seconds > 0 ? result.completionTokens / seconds : null),
    durationMs: null,
    // Images and recordings cost tokens the characters do not show: such a prompt says nothing about the tokenizer.
    promptChars: messages.some((message) => message.images?.length || message.sounds?.length) ? undefined : charsOf(messages),
  };
}

/**
 * An agent's reply: its run continues the agent's conversation when that holds exactly the turns
 * kept, else starts a new one from them. The question's images go to an agent whose model reads
 * them (`sees`) as image_url parts; earlier questions' images are a placeholder each, so a
 * continued conversation never sends an image's bytes again.
 */
export async function agentTurn(
  turn: Turn,
  agentId: string,
  agent: AgentRecord | undefined,
  window: number | null,
  onApproval: () => void,
  sees = false,
): Promise<void> {
  const { conversation, reply, signal } = turn;
  // Besides the messages the run sends the agent's instructions, what memory recalls and its tools' descriptions.
  const recalled = agent?.memory.enabled ? (agent.memory.budget_tokens ?? 800) : 0;
  const plan = turn.plan(window, agent?.instructions ?? '', recalled + (agent?.tools.length ?? 0) * 150);
  if (!plan.fits) throw new ContextOverflow(plan, window!, plan.budget, agent?.name ?? agentId);
  reply.omitted = plan.omitted;
  const before = plan.kept.slice(0, -1).map((message) => message.id);
  const thread = conversation.agentThread;
  const continuing = thread?.agent === agentId && sameIds(thread.messages, before);
  const question = plan.kept.at(-1)!;
  const text = (message: ContextMessage) => withPlaceholders(message.content, message.images ?? 0);
  const images = conversation.messages.find((message) => message.id === question.id)?.images ?? [];
  const asked = await requestMessage(question, images, sees);
  const last: AgentInputMessage = { role: question.role, content: questionContent(asked.content, asked.images) };
  const earlier = plan.kept.slice(0, -1).map((message) => ({ role: message.role, content: text(message) }));
  const run = await runAgentTurn({
    agentId,
    input: continuing ? (typeof last.content === 'string' ? last.content : [last]) : [...earlier, last],
    conversationId: continuing ? thread!.conversationId : undefined,
    signal,
    onView: (view) => {
      reply.runId = view.id;
      reply.steps = view.steps;
      reply.content = replyText(view);
      turn.progress();
    },
    onApproval,
  });
  reply.content = run.output_text;
  conversation.agentThread = { agent: agentId, conversationId: run.conversation_id, messages: [...before, question.id, reply.id] };
  const seconds = run.completed_at ? run.completed_at - run.created_at : 0;
  reply.stats = {
    promptTokens: run.usage.prompt_tokens,
    completionTokens: run.usage.completion_tokens,
    tokensPerSecond: seconds > 0 ? run.usage.completion_tokens / seconds : null,
    durationMs: null,
  };
}
