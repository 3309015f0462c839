/**
 * What both engines do before they generate: a request checked, its prompt rendered with the
 * model's chat wrapper and measured against the context, its grammar picked (tools, JSON); and a
 * forced tool call read back from the text the grammar allowed.
 */
import type { GbnfJsonSchema, ChatHistoryItem, ChatModelFunctions, ChatWrapper, Llama, LlamaGrammar, LlamaModel, LlamaText, Token } from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import { describeTools, toChatHistory } from './chat-history.js';
import { readForcedCall } from './forced-call.js';
import type { GrammarCache } from './grammar-cache.js';
import { toGrammarSchema } from './json-schema.js';
import { hasLoneSurrogate } from './surrogates.js';
import { thoughtBudget, thoughtMarks, wrapperFor, type ThoughtMarks } from './thinking.js';
import type { TokenRunCache } from './token-runs.js';
import { CHAT_FIELDS, type GenerationRequest, type GenerationResult, type StopReason, type ToolSpec } from './types.js';

export interface ModelRuntime {
  llama: Llama;
  model: LlamaModel;
  wrapper: ChatWrapper;
  contextSize: number;
  grammars: GrammarCache;
  /** llama-server's media marker while its process runs with a projector: each image or sound of a message goes there in the prompt. */
  mediaMarker?: string;
  /** The model's tokenizer with memory: a later turn tokenises only the runs of its prompt not seen before (token-runs.ts). */
  tokenRuns?: TokenRunCache;
}

/** A request turned into what either engine runs: the rendered prompt, its budget and its grammar. */
export interface GenerationPlan {
  history: ChatHistoryItem[];
  /** The chat wrapper the prompt was rendered with (the model's own, or with its thinking switched off). */
  wrapper: ChatWrapper;
  /** The format's thought segment when the model may think in this request (not a forced call; in process a thought comes before JSON output, on llama-server a grammar holds from the first token). */
  thought?: ThoughtMarks;
  /** Tokens the thought may take (0: thinking off); undefined: no limit. */
  thoughtBudget?: number;
  /** Tool calls forced by tool_choice (required or named): one call, under a grammar, no text. */
  forced: boolean;
  /** Tools the model may call on its own (tool_choice auto). */
  offered?: ChatModelFunctions;
  /** Per tool, its parameters as the grammar converter takes them (undefined: no parameters). */
  schemas: (GbnfJsonSchema | undefined)[];
  /** The rendered prompt as tokens, measured against the context before anything runs. */
  promptTokens: Token[];
  /** The same prompt as rendered text (a prompt with media goes to llama-server as text). */
  promptText: LlamaText;
  /** The chat wrapper's stop triggers for this prompt (the end-of-turn marks). */
  stopTriggers: LlamaText[];
  maxTokens: number;
  grammar?: LlamaGrammar;
}

/** Why a prompt does not fit, and what to do: shorten the conversation, or (when its fixed part alone is too long) give the model more context. */
function tooLong(request: GenerationRequest, field: string, tokens: number, fixedTokens: number, contextSize: number): string {
  if (fixedTokens < contextSize) {
    return `The ${field} use ${tokens} tokens, but ${request.model} has a context of ${contextSize} tokens. Shorten the conversation or start a new one.`;
  }
  const tools = request.tools.length;
  const parts =
    tools > 0 ? `the system prompt, the ${tools === 1 ? 'tool' : `${tools} tools`} offered and the latest message` : 'the system prompt and the latest message';
  const fewer = tools > 0 ? ', offer fewer tools' : '';
  // The first sentence is the one every context error opens with (Anthropic's shape reads its two numbers).
  return (
    `The ${field} use ${tokens} tokens, but ${request.model} has a context of ${contextSize} tokens. ` +
    `${parts[0]!.toUpperCase()}${parts.slice(1)} alone take ${fixedTokens}: shortening the conversation cannot help. ` +
    `Load ${request.model} with a larger context (its load settings, context size)${fewer}, or shorten the system prompt or the message.`
  );
}

/**
 * Checks and renders a request. The prompt is measured first: a prompt that does not fit the
 * context is refused, never truncated.
 */
export async function planGeneration(runtime: ModelRuntime, request: GenerationRequest): Promise<GenerationPlan> {
  const fields = request.fields ?? CHAT_FIELDS;
  // Every client schema is checked (and refused with its path) before the prompt is rendered or a grammar built.
  checkStops(request.stop);
  const schemas = request.tools.map((tool, index) => (tool.parameters ? toGrammarSchema(tool.parameters, fields.toolParameters(index)) : undefined));
  const outputSchema = request.output.type === 'json' && request.output.schema ? toGrammarSchema(request.output.schema, fields.schema) : undefined;
  const forced = request.tools.length > 0 && (request.toolMode.type === 'required' || request.toolMode.type === 'named');
  const offered = request.tools.length > 0 && request.toolMode.type === 'auto' ? toFunctions(request.tools, schemas) : undefined;
  const wrapper = wrapperFor(runtime.model, runtime.wrapper, request.reasoning);
  const marks = thoughtMarks(wrapper);
  let history = toChatHistory(request.history, fields.history, { thoughts: marks !== undefined, mediaMarker: runtime.mediaMarker });
  if (forced) history = [{ type: 'system', text: describeTools(chosenTools(request).map((index) => request.tools[index]!)) }, ...history];
  if (history.length === 0 || history.every((item) => item.type === 'system')) {
    throw new HearthError('invalid_request_error', `${fields.history} must contain at least one user or assistant message.`, { param: fields.history });
  }

  // Rendered as the engines generate: with the model's turn begun (an empty model response last).
  const state = wrapper.generateContextState({
    chatHistory: [...history, { type: 'model', response: [] }],
    availableFunctions: offered,
    documentFunctionParams: true,
  });
  const tokenizer = runtime.tokenRuns?.tokenizer ?? runtime.model.tokenizer;
  const promptTokens = state.contextText.tokenize(tokenizer);
  const room = runtime.contextSize - promptTokens.length;
  if (room <= 0) {
    // What always goes in: the system prompt, the tools and the latest message. When that alone
    // does not fit, shortening the conversation cannot help: the model's context is too small.
    const fixed = [...history.filter((item) => item.type === 'system'), ...history.filter((item) => item.type !== 'system').slice(-1)];
    const fixedTokens =
      fixed.length === history.length
        ? promptTokens.length
        : wrapper
            .generateContextState({ chatHistory: [...fixed, { type: 'model', response: [] }], availableFunctions: offered, documentFunctionParams: true })
            .contextText.tokenize(tokenizer).length;
    throw new HearthError('context_length_exceeded', tooLong(request, fields.history, promptTokens.length, fixedTokens, runtime.contextSize), {
      param: fields.history,
    });
  }
  const maxTokens = Math.min(request.maxTokens ?? room, room);
  const grammar = forced
    ? await runtime.grammars.forTools(chosenTools(request).map((index) => [request.tools[index]!.name, schemas[index]]))
    : await grammarForOutput(runtime, request, outputSchema);
  const thought = marks && !forced ? marks : undefined;
  return {
    history,
    wrapper,
    thought,
    thoughtBudget: thought ? thoughtBudget(request.reasoning) : undefined,
    forced,
    offered,
    schemas,
    promptTokens,
    promptText: state.contextText,
    stopTriggers: state.stopGenerationTriggers,
    maxTokens,
    grammar,
  };
}

/** Stop texts are matched against generated text (and sent on to llama-server): half a surrogate pair is no text either can take. */
export function checkStops(stop: string[]): void {
  const index = stop.findIndex(hasLoneSurrogate);
  if (index < 0) return;
  const param = stop.length === 1 ? 'stop' : `stop[${index}]`;
  throw new HearthError('invalid_request_error', `${param} holds half of a UTF-16 surrogate pair (\\ud800-\\udfff alone), which is not text.`, { param });
}

export function forcedCall(
  text: string,
  request: GenerationRequest,
  finishReason: StopReason,
  promptTokens: number,
  completionTokens: number,
): GenerationResult {
  const call = readForcedCall(
    text,
    chosenTools(request).map((index) => request.tools[index]!.name),
  );
  return {
    text: '',
    toolCalls: [{ id: newId('call_'), name: call.name, arguments: call.arguments }],
    // Cut off by max_tokens or a cancel before the call was complete: the partial call, as OpenAI reports it.
    finishReason: call.complete ? 'tool_calls' : finishReason === 'stop' ? 'length' : finishReason,
    promptTokens,
    completionTokens,
  };
}

/** Indexes of the tools a forced call may choose from. */
function chosenTools(request: GenerationRequest): number[] {
  if (request.toolMode.type !== 'named') return request.tools.map((_tool, index) => index);
  const name = request.toolMode.name;
  const index = request.tools.findIndex((candidate) => candidate.name === name);
  if (index < 0) throw new HearthError('invalid_request_error', `tool_choice names "${name}", which is not in tools.`, { param: 'tool_choice' });
  return [index];
}

function toFunctions(tools: ToolSpec[], schemas: (GbnfJsonSchema | undefined)[]): ChatModelFunctions {
  return Object.fromEntries(tools.map((tool, index) => [tool.name, { description: tool.description, params: schemas[index] }])) as ChatModelFunctions;
}

async function grammarForOutput(runtime: ModelRuntime, request: GenerationRequest, schema: GbnfJsonSchema | undefined): Promise<LlamaGrammar | undefined> {
  if (request.output.type !== 'json') return undefined;
  return schema ? runtime.grammars.forSchema(schema) : runtime.grammars.anyJson();
}
