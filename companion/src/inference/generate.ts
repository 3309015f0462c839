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
  type LlamaText,
  type Token,
} from 'node-llama-cpp';
import { HearthError } from '../errors.js';
import { newId } from '../ids.js';
import { describeTools, toChatHistory } from './chat-history.js';
import { readForcedCall } from './forced-call.js';
import { boundExponents } from './json-numbers.js';
import { toGrammarSchema } from './json-schema.js';
import { hasLoneSurrogate } from './surrogates.js';
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

/** A request turned into what either engine runs: the rendered prompt, its budget and its grammar. */
export interface GenerationPlan {
  history: ChatHistoryItem[];
  /** Tool calls forced by tool_choice (required or named): one call, under a grammar, no text. */
  forced: boolean;
  /** Tools the model may call on its own (tool_choice auto). */
  offered?: ChatModelFunctions;
  /** Per tool, its parameters as the grammar converter takes them (undefined: no parameters). */
  schemas: (GbnfJsonSchema | undefined)[];
  /** The rendered prompt as tokens, measured against the context before anything runs. */
  promptTokens: Token[];
  /** The chat wrapper's stop triggers for this prompt (the end-of-turn marks). */
  stopTriggers: LlamaText[];
  maxTokens: number;
  grammar?: LlamaGrammar;
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
  let history = toChatHistory(request.history, fields.history);
  if (forced) history = [{ type: 'system', text: describeTools(chosenTools(request).map((index) => request.tools[index]!)) }, ...history];
  if (history.length === 0 || history.every((item) => item.type === 'system')) {
    throw new HearthError('invalid_request_error', `${fields.history} must contain at least one user or assistant message.`, { param: fields.history });
  }

  const state = runtime.wrapper.generateContextState({ chatHistory: history, availableFunctions: offered, documentFunctionParams: true });
  const promptTokens = state.contextText.tokenize(runtime.model.tokenizer);
  const room = runtime.contextSize - promptTokens.length;
  if (room <= 0) {
    throw new HearthError(
      'context_length_exceeded',
      `The ${fields.history} use ${promptTokens.length} tokens, but ${request.model} has a context of ${runtime.contextSize} tokens. Shorten the conversation or start a new one.`,
      { param: fields.history },
    );
  }
  const maxTokens = Math.min(request.maxTokens ?? room, room);
  const grammar = forced
    ? await runtime.grammars.forTools(chosenTools(request).map((index) => [request.tools[index]!.name, schemas[index]]))
    : await grammarForOutput(runtime, request, outputSchema);
  return { history, forced, offered, schemas, promptTokens, stopTriggers: state.stopGenerationTriggers, maxTokens, grammar };
}

/** Stop texts are matched against generated text (and sent on to llama-server): half a surrogate pair is no text either can take. */
function checkStops(stop: string[]): void {
  const index = stop.findIndex(hasLoneSurrogate);
  if (index < 0) return;
  const param = stop.length === 1 ? 'stop' : `stop[${index}]`;
  throw new HearthError('invalid_request_error', `${param} holds half of a UTF-16 surrogate pair (\\ud800-\\udfff alone), which is not text.`, { param });
}

/**
 * Runs one generation on a sequence the caller owns (the in-process engine), from the request's
 * plan when the caller made it already (to choose the sequence by its prompt).
 */
export async function generate(
  runtime: ModelRuntime,
  sequence: LlamaContextSequence,
  request: GenerationRequest,
  plan?: GenerationPlan,
): Promise<GenerationResult> {
  const { history, forced, offered, promptTokens, maxTokens, grammar } = plan ?? (await planGeneration(runtime, request));
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

    if (forced) return forcedCall(response.response, request, finishReason, promptTokens.length, completionTokens);
    const calls: ToolCallRecord[] = (response.functionCalls ?? []).map((call) => ({
      id: newId('call_'),
      name: call.functionName,
      arguments: JSON.stringify(call.params ?? {}),
    }));
    return {
      text: response.response,
      toolCalls: calls,
      finishReason: calls.length > 0 ? 'tool_calls' : finishReason,
      promptTokens: promptTokens.length,
      completionTokens,
    };
  } finally {
    chat.dispose({ disposeSequence: false });
  }
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

export function penalties(request: GenerationRequest) {
  const { presencePenalty, frequencyPenalty } = request.sampling;
  if (!presencePenalty && !frequencyPenalty) return false as const;
  return { penalty: 1, presencePenalty: presencePenalty ?? 0, frequencyPenalty: frequencyPenalty ?? 0 };
}

async function grammarForOutput(runtime: ModelRuntime, request: GenerationRequest, schema: GbnfJsonSchema | undefined): Promise<LlamaGrammar | undefined> {
  if (request.output.type !== 'json') return undefined;
  return schema ? runtime.grammars.forSchema(schema) : runtime.grammars.anyJson();
}

/**
 * Grammars are compiled once per distinct schema: clients tend to repeat the same one. Every JSON
 * grammar's numbers have bounded exponents (json-numbers.ts), for both engines.
 */
export class GrammarCache {
  private readonly grammars = new Map<string, Promise<LlamaGrammar>>();

  constructor(
    private readonly llama: Llama,
    private readonly limit = 64,
  ) {}

  anyJson(): Promise<LlamaGrammar> {
    return this.remember('json', () => this.llama.getGrammarFor('json'));
  }

  /** A grammar for a schema toGrammarSchema converted (and checked): a json_schema answer's. */
  forSchema(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    return this.remember(JSON.stringify(schema), () => this.llama.createGrammarForJsonSchema(schema as never));
  }

  /** A grammar for one tool's parameters (converted by toGrammarSchema), for the server engine's tool-call grammar. */
  forParams(schema: GbnfJsonSchema): Promise<LlamaGrammar> {
    return this.forSchema(schema);
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
      grammar = create().then((made) => this.bounded(made));
      grammar.catch(() => this.grammars.delete(key));
      this.grammars.set(key, grammar);
    }
    return grammar;
  }

  /** node-llama-cpp's grammar again, with its numbers' exponents bounded (its own settings kept). */
  private bounded(grammar: LlamaGrammar): Promise<LlamaGrammar> | LlamaGrammar {
    const text = boundExponents(grammar.grammar);
    if (text === grammar.grammar) return grammar;
    return this.llama.createGrammar({
      grammar: text,
      stopGenerationTriggers: grammar.stopGenerationTriggers,
      trimWhitespaceSuffix: grammar.trimWhitespaceSuffix,
      rootRuleName: grammar.rootRuleName,
    });
  }
}
