/** How both engines read a reply streamed as OpenAI-style chat completion chunks. */
import type { EngineChatResult } from './types';

/** The parts of a chunk that both engines send alike. */
export interface ReplyChunk {
  choices: { delta?: { content?: string | null }; finish_reason?: string | null }[];
  usage?: { prompt_tokens: number; completion_tokens: number } | null;
}

/**
 * Reads the chunks into a result: the text (each piece also passed to `onDelta`), why it finished
 * and the token counts; `more` reads what else one engine's chunks carry.
 */
export async function readReply<T extends ReplyChunk>(
  chunks: AsyncIterable<T>,
  onDelta: (text: string) => void,
  more: (chunk: T, result: EngineChatResult) => void = () => undefined,
): Promise<EngineChatResult> {
  const result: EngineChatResult = { text: '', finishReason: null, promptTokens: null, completionTokens: null, tokensPerSecond: null };
  for await (const chunk of chunks) {
    const choice = chunk.choices[0];
    const delta = choice?.delta?.content;
    if (delta) {
      result.text += delta;
      onDelta(delta);
    }
    if (choice?.finish_reason === 'stop' || choice?.finish_reason === 'length') result.finishReason = choice.finish_reason;
    if (chunk.usage) {
      result.promptTokens = chunk.usage.prompt_tokens;
      result.completionTokens = chunk.usage.completion_tokens;
    }
    more(chunk, result);
  }
  return result;
}
