/**
 * A chat format's thought segment (a reasoning model's `<think>…</think>`), read from its
 * node-llama-cpp chat wrapper, and how a request's reasoning control applies to it on either
 * engine: thinking off uses the format's own switch where it has one (Qwen's `thoughts:
 * 'discourage'`, a Jinja template's `enable_thinking`) and a thought budget of 0 besides (a thought
 * the model still opens is closed at once); a budget closes the thought after that many tokens.
 */
import type { ChatWrapper, LlamaModel } from 'node-llama-cpp';
import { binding } from './binding.js';
import type { ReasoningControl } from './types.js';

/** The thought segment as text marks. */
export interface ThoughtMarks {
  /** Opens the thought ('' when the template opens it before the model's turn). */
  open: string;
  close: string;
  /** The model's turn starts inside the thought: opened by the template, or opened by the engine for it. */
  atStart: boolean;
}

/** The wrapper's thought segment, or undefined when its format has none. */
export function thoughtMarks(wrapper: ChatWrapper): ThoughtMarks | undefined {
  const segment = wrapper.settings.segments?.thought;
  if (!segment) return undefined;
  const close = textOf(segment.suffix);
  const prefix = segment.prefix as unknown;
  if (typeof prefix === 'object' && prefix !== null && 'type' in prefix && (prefix as { type: unknown }).type === 'openedOnStart')
    return close ? { open: '', close, atStart: true } : undefined;
  const open = textOf(prefix);
  if (!open || !close) return undefined;
  return { open, close, atStart: segment.openOnResponseStart === true };
}

function textOf(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  const { LlamaText } = binding();
  try {
    return LlamaText(value as never).toString() || undefined;
  } catch {
    return undefined;
  }
}

/** Tokens the thought may take: 0 when thinking is off, the budget when one is set, else no limit. */
export function thoughtBudget(reasoning: ReasoningControl | undefined): number | undefined {
  if (!reasoning) return undefined;
  if (!reasoning.enabled) return 0;
  return reasoning.budgetTokens;
}

const withoutThoughts = new WeakMap<ChatWrapper, ChatWrapper>();

/**
 * The wrapper a request renders its prompt with: the model's own, or with thinking off, the same
 * format with its template's switch turned off (cached per wrapper). A format without a switch
 * keeps its wrapper (the budget of 0 closes the thought instead).
 */
export function wrapperFor(model: LlamaModel, wrapper: ChatWrapper, reasoning: ReasoningControl | undefined): ChatWrapper {
  if (reasoning?.enabled !== false || !thoughtMarks(wrapper)) return wrapper;
  let off = withoutThoughts.get(wrapper);
  if (!off) {
    off = switchedOff(model, wrapper) ?? wrapper;
    withoutThoughts.set(wrapper, off);
  }
  return off;
}

function switchedOff(model: LlamaModel, wrapper: ChatWrapper): ChatWrapper | undefined {
  const { JinjaTemplateChatWrapper, QwenChatWrapper, resolveChatWrapper } = binding();
  if (wrapper instanceof QwenChatWrapper) {
    const off = resolveChatWrapper(model, { customWrapperSettings: { qwen: { thoughts: 'discourage' } } });
    return off instanceof QwenChatWrapper ? off : undefined;
  }
  if (wrapper instanceof JinjaTemplateChatWrapper && /\benable_thinking\b/.test(wrapper.template)) {
    return new JinjaTemplateChatWrapper({ template: wrapper.template, tokenizer: model.tokenizer, reasoning: false });
  }
  return undefined;
}
