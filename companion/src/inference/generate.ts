import {
  LlamaChat,
  type GbnfJsonSchema,
  type ChatHistoryItem,
  type ChatModelFunctions,
  type ChatWrapper,
  type Llama,
  type LlamaContextSequence,
  type LlamaGrammar,
  type LlamaModel,
  type Token,
} from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import { describeTools, toChatHistory } from './chat-history.js';
import { readForcedCall } from './forced-call.js';
import { toGrammarSchema } from './json-schema.js';
import { CHAT_FIELDS, type GenerationRequest, type GenerationResult, type StopReason, type ToolCallRecord, type ToolSpec } from './types.js';

export interface ModelRuntime {
  llama: Llama;
  model: LlamaModel;
  wrapper: ChatWrapper;
  contextSize: number;
  grammars: GrammarCache;
}

/** Default sampling temperature when a request names none (llama.cpp server and LM Studio use 0.8). */
export const DEFAULT_TEMPERATURE = 0.8;

/** A request's prompt as the model will evaluate it; `tokens` lets the pool find the sequence that holds it. */
export interface PreparedPrompt {
  history: ChatHistoryItem[];
  schemas: (GbnfJsonSchema | undefined)[];
  forced: boolean;
  offered: ChatModelFunctions | undefined;
  tokens: Token[];
}

/**
 * Renders the request's history with the chat wrapper and tokenizes it. A prompt that does not
 * fit the context is refused here, never truncated.
 */
export function preparePrompt(runtime: ModelRuntime, request: GenerationRequest): PreparedPrompt {
  const fields = request.fields ?? CHAT_FIELDS;
  const schemas = request.tools.map((tool, index) => (tool.parameters ? toGrammarSchema(tool.parameters, fields.toolParameters(index)) : undefined));
  const forced = request.tools.length > 0 && (request.toolMode.type === 'required' || request.toolMode.type === 'named');
  const offered = request.tools.length > 0 && request.toolMode.type === 'auto' ? toFunctions(request.tools, schemas) : undefined;
  let history = toChatHistory(request.history, fields.history);
  if (forced) history = [{ type: 'system', text: describeTools(chosenTools(request).map((index) => request.tools[index]!)) }, ...history];
  if (history.length === 0 || history.every((item) => item.type === 'system')) {
    throw new HearthError('invalid_request_error', `${fields.history} must contain at least one user or assistant message.`, { param: fields.history });
  }

  const tokens = renderTokens(runtime, history, offered);
  if (tokens.length >= runtime.contextSize) {
    throw new HearthError(
      'context_length_exceeded',
      `The ${fields.history} use ${tokens.length} tokens, but ${request.model} has a context of ${runtime.contextSize} tokens. Shorten the conversation or start a new one.`,
      { param: fields.history },
    );
  }
  return { history, schemas, forced, offered, tokens };
}

/** Runs one generation on a sequence the caller owns (its prompt prepared by `preparePrompt`, unless given). */
export async function generate(
  runtime: ModelRuntime,
  sequence: LlamaContextSequence,
  request: GenerationRequest,
  prompt: PreparedPrompt = preparePrompt(runtime, request),
): Promise<GenerationResult> {
  const { history, schemas, forced, offered } = prompt;
  const promptTokens = prompt.tokens.length;
  const room = runtime.contextSize - promptTokens;
  const maxTokens = Math.min(request.maxTokens ?? room, room);
  const grammar = forced
    ? await runtime.grammars.forTools(chosenTools(request).map((index) => [request.tools[index]!.name, schemas[index]]))
    : await grammarForOutput(runtime, request);

  const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: runtime.wrapper });
  const outputBefore = sequence.tokenMeter.usedOutputTokens;
  try {
    const common = {
      maxTokens,
      signal: request.signal,
      stopOnAbortSignal: true,
      temperature: request.sampling.temperature ?? DEFAULT_TEMPERATURE,
      topP: request.sampling.topP,
      seed: request.sampling.seed,
      repeatPenalty: penalties(request),
      customStopTriggers: request.stop.length > 0 ? request.stop : undefined,
      onTextChunk: forced ? undefined : request.onText,
    } as const;
    const response = offered
      ? await chat.generateResponse(history, { ...common, functions: offered, documentFunctionParams: true, maxParallelFunctionCalls: undefined })
      : await chat.generateResponse(history, { ...common, grammar });
    const completionTokens = sequence.tokenMeter.usedOutputTokens - outputBefore;
    const stop = response.metadata.stopReason;
    const finishReason = stop === 'abort' ? 'cancelled' : stop === 'maxTokens' ? 'length' : 'stop';

    if (forced) return forcedCall(response.response, request, finishReason, promptTokens, completionTokens);
    const calls: ToolCallRecord[] = (response.functionCalls ?? []).map((call) => ({
      id: newId('call_'),
      name: call.functionName,
      arguments: JSON.stringify(call.params ?? {}),
    }));
    return {
      text: response.response,
      toolCalls: calls,
      finishReason: calls.length > 0 ? 'tool_calls' : finishReason,
      promptTokens,
      completionTokens,
    };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
}

function forcedCall(text: string, request: GenerationRequest, finishReason: StopReason, promptTokens: number, completionTokens: number): GenerationResult {
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

function renderTokens(runtime: ModelRuntime, history: ChatHistoryItem[], functions: ChatModelFunctions | undefined): Token[] {
  const state = runtime.wrapper.generateContextState({ chatHistory: history, availableFunctions: functions, documentFunctionParams: true });
  return state.contextText.tokenize(runtime.model.tokenizer);
}

function penalties(request: GenerationRequest) {
  const { presencePenalty, frequencyPenalty } = request.sampling;
  if (!presencePenalty && !frequencyPenalty) return false as const;
  return { penalty: 1, presencePenalty: presencePenalty ?? 0, frequencyPenalty: frequencyPenalty ?? 0 };
}

async function grammarForOutput(runtime: ModelRuntime, request: GenerationRequest): Promise<LlamaGrammar | undefined> {
  if (request.output.type !== 'json') return undefined;
  return request.output.schema ? runtime.grammars.forSchema(request.output.schema, (request.fields ?? CHAT_FIELDS).schema) : runtime.grammars.anyJson();
}

/** Grammars are compiled once per distinct schema: clients tend to repeat the same one. */
export class GrammarCache {
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(
    private readonly llama: Llama,
    private readonly limit = 64,
  ) {}

  anyJson(): Promise<LlamaGrammar> {
    return this.remember('json', () => this.llama.getGrammarFor('json'));
  }

  forSchema(schema: Record<string, unknown>, param: string): Promise<LlamaGrammar> {
    const converted = toGrammarSchema(schema, param);
    return this.remember(JSON.stringify(converted), () => this.llama.createGrammarForJsonSchema(converted as never));
  }

  /** A grammar for `{"name": <one of the tools>, "arguments": <its schema>}`. */
  forTools(tools: [name: string, schema: GbnfJsonSchema | undefined][]): Promise<LlamaGrammar> {
    const options = tools.map(([name, schema]) => ({
      type: 'object',
      properties: {
        name: { const: name },
        arguments: schema ?? { type: 'object', additionalProperties: true },
      },
      required: ['name', 'arguments'],
      additionalProperties: false,
    }));
    const schema = options.length === 1 ? options[0]! : { oneOf: options };
    return this.remember(JSON.stringify(schema), () => this.llama.createGrammarForJsonSchema(schema as never));
  }

  private remember(key: string, create: () => Promise<LlamaGrammar>): Promise<LlamaGrammar> {
    let grammar = this.grammars.get(key);
    if (!grammar) {
      if (this.grammars.size >= this.limit) this.grammars.delete(this.grammars.keys().next().value!);
      grammar = create();
      grammar.catch(() => this.grammars.delete(key));
      this.grammars.set(key, grammar);
    }
    return grammar;
  }
}
