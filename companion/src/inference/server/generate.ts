/**
 * One generation on llama-server: the prompt rendered and tokenised here with node-llama-cpp's chat
 * wrapper (so both engines see the same tokens and the same budget), sent as tokens to /completion
 * with `cache_prompt` so the server reuses the slot's (or its RAM cache's) longest matching prefix;
 * grammars are node-llama-cpp's GBNF, the tool-call grammar lazy from the wrapper's call trigger.
 * Tool-call parsing, stop reasons and usage are Hearth's, as in process.
 */
import type { LlamaGrammar } from 'node-llama-cpp';
import { binding } from '../binding.js';
import { HearthError } from '../../errors.js';
import { newId } from '../../ids.js';
import { forcedCall, planGeneration, type GenerationPlan, type ModelRuntime } from '../generation-plan.js';
import { resolveSampling, type ResolvedSampling } from '../sampling.js';
import type { GenerationRequest, GenerationResult, StopReason, ToolCallRecord } from '../types.js';
import { EngineConnectionError, EngineHttpError, type ServerClient } from './client.js';
import { requestMedia } from '../media.js';
import { mediaPrompt } from './media.js';
import { OutputFilter, withoutHidden, type HiddenSpan } from './output-filter.js';
import { parseCalls, plainText, toolCallGrammar, type CallSyntax } from './tool-syntax.js';

export interface ServerRuntime extends ModelRuntime {
  /** The wrapper's tool-call syntax as text. */
  syntax: CallSyntax;
  /** Output the client does not see (a model's thoughts). */
  hidden: HiddenSpan[];
}

/** What the server reports of one request's prompt: tokens it evaluated, and tokens it reused from a cache. */
export interface PromptCounters {
  evaluated: number;
  reused: number;
  /** The slot that served it, and the tokens that slot now holds (a prompt of tokens only; not one with media). */
  slot?: number;
  held?: number[];
  /** Speculative decoding: tokens the draft proposed, and how many of them the model accepted. */
  drafted?: number;
  accepted?: number;
}

export interface CompletionEvent {
  content?: string;
  /** The tokens of `content` (`return_tokens`). */
  tokens?: number[];
  /** The stop text that ended the generation (stop_type `word`). */
  stopping_word?: string;
  stop?: boolean;
  tokens_predicted?: number;
  stop_type?: 'eos' | 'word' | 'limit' | 'none';
  /** `response_fields` moves these to the top level under their path. */
  'timings/prompt_n'?: number;
  'timings/cache_n'?: number;
  'timings/draft_n'?: number;
  'timings/draft_n_accepted'?: number;
  id_slot?: number;
}

/** What a streamed /completion event carries (`response_fields`), for chat turns and raw prompts alike. */
export const COMPLETION_FIELDS = [
  'content',
  'tokens',
  'stop',
  'stop_type',
  'stopping_word',
  'tokens_predicted',
  'timings/prompt_n',
  'timings/cache_n',
  'timings/draft_n',
  'timings/draft_n_accepted',
  'id_slot',
];

/**
 * Streams the answer into `request.onText` (and the thought into `request.onReasoning`) and
 * resolves with the result; `counters` hears the prompt's cache use. A thought budget runs the
 * generation in rounds on the same slot: the thought with `n_predict` = what is left of the budget,
 * then the prompt plus what was generated plus the thought's close mark, whose prefix the slot
 * reuses (`cache_prompt`), for the answer. With a budget, an answer that opens a thought stops at
 * its mark, so that thought is bounded too (0: closed at once).
 */
export async function generateOnServer(
  runtime: ServerRuntime,
  client: ServerClient,
  request: GenerationRequest,
  counters?: (counts: PromptCounters) => void,
  /** Picks the slot for a prompt of tokens (after restoring a saved conversation into it), or leaves it to the server. */
  slotFor?: (prompt: number[]) => Promise<number | undefined>,
): Promise<GenerationResult> {
  const plan = await planGeneration(runtime, request);
  const media = requestMedia(request);
  /** The prompt's size as the server counted it (a media item counts its embeddings, not its marker). */
  let served: number | undefined;
  /** Prompt tokens the first round found in the slot's cache (not evaluated again): Anthropic's cache_read_input_tokens. */
  let reused: number | undefined;
  const names = request.tools.map((tool) => tool.name);
  const lazy = plan.offered ? await lazyToolGrammar(runtime, plan, names) : undefined;
  const grammar = plan.grammar;
  // A grammar (JSON output) holds from the first token on llama-server: no thought then.
  const marks = grammar ? undefined : plan.thought;
  // The request's thought span replaces the format's hidden one: its text is streamed as reasoning.
  const spans: HiddenSpan[] = marks
    ? [...runtime.hidden.filter((span) => !span.thought), { open: marks.open, close: marks.close, openAtStart: marks.atStart, thought: true }]
    : runtime.hidden;
  const output = { text: '', tokens: 0, stop: 'none' as CompletionEvent['stop_type'], word: '' };
  const reasoning = { text: '', tokens: 0 };
  // Stage 1 of the text pipeline (text-pipeline.ts): only what the client may see goes on to request.onText, the thought to onReasoning.
  const filter = new OutputFilter(
    lazy ? runtime.syntax.triggers : [],
    spans,
    (text) => request.onText?.(text),
    (text) => {
      reasoning.text += text;
      request.onReasoning?.(text);
    },
  );
  const sampling = resolveSampling(request.sampling);
  const tokens = (text: string) => runtime.model.tokenizer(text, true);
  // The engine opens the thought the format opens at the model's turn (node-llama-cpp does the same in process).
  const opening = marks?.atStart && marks.open ? tokens(marks.open) : [];
  const stops = [...request.stop, ...stopTexts(plan, grammar)];
  const body = {
    n_predict: plan.maxTokens,
    cache_prompt: true,
    stream: true,
    return_tokens: true,
    ...samplingFields(sampling),
    stop: stops,
    ...(grammar ? { grammar: grammar.grammar } : {}),
    ...(lazy ? { grammar: lazy.grammar, grammar_lazy: true, grammar_triggers: lazy.triggers, preserved_tokens: lazy.preserved } : {}),
    response_fields: COMPLETION_FIELDS,
  };
  let slot: number | undefined;
  let pinned = false;
  const budget = marks ? plan.thoughtBudget : undefined;
  /** A mark the engine writes itself (the thought's open or close): it joins the output as if generated. */
  const insert = (mark: string) => {
    output.text += mark;
    filter.push(mark);
  };
  try {
    for (;;) {
      const left = plan.maxTokens - output.tokens;
      if (left <= 0) break;
      const thinking = filter.thinking;
      const thoughtLeft = thinking && budget !== undefined ? budget - reasoning.tokens : undefined;
      if (thoughtLeft !== undefined && thoughtLeft <= 0) {
        insert(marks!.close);
        continue;
      }
      const watchOpen = !thinking && budget !== undefined && marks !== undefined && marks.open !== '';
      const round = {
        ...body,
        prompt:
          media.length > 0
            ? mediaPrompt(runtime.model, plan.promptText, (marks?.atStart ? marks.open : '') + output.text, media)
            : [...plan.promptTokens, ...opening, ...(output.text ? tokens(output.text) : [])],
        n_predict: thoughtLeft !== undefined ? Math.min(thoughtLeft, left) : left,
        stop: watchOpen ? [...stops, marks.open] : stops,
      };
      let word = '';
      let predicted = 0;
      if (!pinned && slotFor && Array.isArray(round.prompt)) slot = await slotFor(round.prompt);
      pinned = true;
      const generated: number[] = [];
      for await (const event of client.events<CompletionEvent>('/completion', slot === undefined ? round : { ...round, id_slot: slot }, request.signal)) {
        if (event.tokens) generated.push(...event.tokens);
        // Every generated token of the thought counts, those whose text the server still holds back (a possible stop text's start) too.
        if (filter.thinking) reasoning.tokens += event.tokens?.length ?? (event.content ? 1 : 0);
        if (event.content) {
          output.text += event.content;
          if (!plan.forced) filter.push(event.content);
        }
        if (event.tokens_predicted !== undefined) predicted = event.tokens_predicted;
        if (event.stop) {
          output.stop = event.stop_type;
          word = event.stopping_word ?? '';
          output.word = word;
          const held = Array.isArray(round.prompt) ? [...round.prompt, ...generated] : undefined;
          counters?.({
            evaluated: event['timings/prompt_n'] ?? 0,
            reused: event['timings/cache_n'] ?? 0,
            slot: event.id_slot,
            held,
            drafted: event['timings/draft_n'] ?? 0,
            accepted: event['timings/draft_n_accepted'] ?? 0,
          });
          served ??= (event['timings/prompt_n'] ?? 0) + (event['timings/cache_n'] ?? 0);
          reused ??= event['timings/cache_n'] ?? 0;
        }
      }
      output.tokens += predicted;
      if (plan.maxTokens - output.tokens <= 0 || request.signal.aborted) break;
      // The answer opened a thought: it goes on inside it, under the budget.
      if (watchOpen && output.stop === 'word' && word === marks.open) {
        insert(marks.open);
        continue;
      }
      // The thought used its budget (the round's limit was what the budget left): closed, and the answer starts.
      if (output.stop === 'limit' && filter.thinking && thoughtLeft !== undefined) {
        insert(marks!.close);
        continue;
      }
      break;
    }
  } catch (error) {
    if (!request.signal.aborted) throw engineFailure(error);
  }
  const cancelled = request.signal.aborted;
  const promptTokens = media.length > 0 && served ? served : plan.promptTokens.length;
  const finishReason: StopReason = cancelled ? 'cancelled' : output.stop === 'limit' ? 'length' : 'stop';
  if (!plan.forced && !filter.calling) filter.finish();
  let text = output.text;
  if (grammar?.trimWhitespaceSuffix) text = text.trimEnd();
  const cache = reused ? { cachedTokens: reused } : {};
  if (plan.forced) return { ...forcedCall(text, request, finishReason, promptTokens, output.tokens), ...cache };
  text = withoutHidden(text, spans);
  const thought = marks ? { reasoning: reasoning.text, reasoningTokens: Math.min(reasoning.tokens, output.tokens) } : {};
  // Which of the client's stop texts ended it (the others are the wrapper's and the grammar's).
  const stopped = finishReason === 'stop' && output.stop === 'word' && request.stop.includes(output.word) ? { stopSequence: output.word } : {};
  if (!lazy) return { text, toolCalls: [], finishReason, promptTokens, completionTokens: output.tokens, ...thought, ...cache, ...stopped };
  const parsed = parseCalls(text, runtime.syntax, names);
  const calls: ToolCallRecord[] = parsed.complete
    ? parsed.calls.map((call) => ({ id: newId('call_'), name: call.name, arguments: JSON.stringify(call.params ?? {}) }))
    : [];
  return {
    text: parsed.text,
    toolCalls: calls,
    finishReason: calls.length > 0 ? 'tool_calls' : finishReason === 'stop' && !parsed.complete ? 'length' : finishReason,
    promptTokens,
    completionTokens: output.tokens,
    ...thought,
    ...cache,
    ...(calls.length === 0 && parsed.complete ? stopped : {}),
  };
}

/** A request's resolved sampling as llama-server's /completion fields. */
export function samplingFields(sampling: ResolvedSampling) {
  return {
    temperature: sampling.temperature,
    top_p: sampling.topP,
    top_k: sampling.topK,
    min_p: sampling.minP,
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
    presence_penalty: sampling.presencePenalty,
    frequency_penalty: sampling.frequencyPenalty,
    repeat_penalty: sampling.repeatPenalty,
  };
}

/** The wrapper's and the grammar's stop texts (special tokens such as EOS need none: the server stops at them). */
function stopTexts(plan: GenerationPlan, grammar: LlamaGrammar | undefined): string[] {
  const triggers = [...plan.stopTriggers, ...(grammar?.stopGenerationTriggers ?? []).map((trigger) => binding().LlamaText(trigger as never))];
  const texts = triggers.map((trigger) => plainText(trigger)).filter((text): text is string => text !== undefined && text !== '');
  return [...new Set(texts)];
}

async function lazyToolGrammar(runtime: ServerRuntime, plan: GenerationPlan, names: string[]) {
  const tools = await Promise.all(
    names.map(async (name, index) => {
      const schema = plan.schemas[index];
      return { name, paramsGrammar: schema ? (await runtime.grammars.forParams(schema)).grammar : undefined };
    }),
  );
  const triggers = runtime.syntax.triggers;
  // A trigger that is one token must be named as a preserved token; llama-server then matches the token itself.
  const preserved = triggers.filter((trigger) => runtime.model.tokenizer(trigger, true).length === 1);
  return {
    grammar: toolCallGrammar(runtime.syntax, tools),
    triggers: triggers.map((value) => ({ type: 1, value })),
    preserved,
  };
}

/** A broken connection means the process ended or is ending: the request fails clearly, and the next one restarts it. */
export function engineFailure(error: unknown): unknown {
  if (error instanceof HearthError) return error;
  if (error instanceof EngineConnectionError) {
    return new HearthError(
      'engine_crashed',
      `The model's engine process stopped during this request (${error.message}). It is being restarted; retry the request.`,
      {
        retryAfter: 1,
        cause: error,
      },
    );
  }
  if (error instanceof EngineHttpError) {
    return new HearthError(error.status === 503 ? 'server_busy' : 'internal_error', `llama-server refused the request: ${error.message}`, {
      retryAfter: error.status === 503 ? 1 : undefined,
      cause: error,
    });
  }
  return error;
}
