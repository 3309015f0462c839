import { LlamaChat, resolveChatWrapper, type LlamaContext, type LlamaContextSequence, type LlamaModel } from 'node-llama-cpp';
import { loadLlama } from '../companion/src/inference/llama.js';

export interface Run {
  tokensPerSecond: number;
  firstTokenMs: number;
  threads: number;
}

interface Direct {
  model: LlamaModel;
  contexts: Map<number, { context: LlamaContext; sequences: LlamaContextSequence[] }>;
  maxSequences: number;
  contextSize: number;
  close(): Promise<void>;
}

export async function openDirect(modelPath: string, maxSequences: number, contextSize = 2048): Promise<Direct> {
  const llama = await loadLlama('cpu');
  const model = await llama.loadModel({ modelPath });
  const contexts = new Map<number, { context: LlamaContext; sequences: LlamaContextSequence[] }>();
  return {
    model,
    contexts,
    maxSequences,
    contextSize,
    async close() {
      for (const { context } of contexts.values()) await context.dispose();
      await model.dispose();
    },
  };
}

/** The same generation the server runs, called on node-llama-cpp directly: one LlamaChat per sequence. */
/** `prompt` may be a function, called once per stream, for prompts no sequence has seen. */
export async function directRun(direct: Direct, threads: number, prompt: string | (() => string), tokens: number, streams: number): Promise<Run> {
  let entry = direct.contexts.get(threads);
  if (!entry) {
    const context = await direct.model.createContext({ contextSize: direct.contextSize, sequences: direct.maxSequences, threads, batchSize: 512 });
    entry = { context, sequences: Array.from({ length: direct.maxSequences }, () => context.getSequence()) };
    direct.contexts.set(threads, entry);
  }
  const wrapper = resolveChatWrapper(direct.model);
  const started = performance.now();
  let first = 0;
  const counts = await Promise.all(
    entry.sequences.slice(0, streams).map(async (sequence) => {
      const chat = new LlamaChat({ contextSequence: sequence, chatWrapper: wrapper });
      const before = sequence.tokenMeter.usedOutputTokens;
      await chat.generateResponse([{ type: 'user', text: typeof prompt === 'string' ? prompt : prompt() }], {
        maxTokens: tokens,
        temperature: 0.8,
        repeatPenalty: false,
        onTextChunk: () => {
          if (!first) first = performance.now() - started;
        },
      });
      chat.dispose({ disposeSequence: false });
      return sequence.tokenMeter.usedOutputTokens - before;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { tokensPerSecond: counts.reduce((a, b) => a + b, 0) / seconds, firstTokenMs: first, threads };
}
