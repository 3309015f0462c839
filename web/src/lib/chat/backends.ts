/**
 * One way to ask for a reply whatever runs the model: the companion (over HTTP, through
 * $lib/api) or an in-browser engine (through the engine worker).
 */
import { streamChat } from '$lib/api/chat';
import type { ChatMessage, ReasoningEffort, UserContentPart } from '#shared/api/openai.js';
import { engineHost } from '$lib/engines/host';
import type { EngineKind } from '$lib/engines/types';

export type Runtime = 'companion' | EngineKind;

export interface ModelRef {
  runtime: Runtime;
  id: string;
}

/** `companion:tiny`, `wllama:tiny.gguf`, `webllm:Llama-3.2-1B-Instruct-q4f32_1-MLC`. */
export function modelKey(ref: ModelRef): string {
  return `${ref.runtime}:${ref.id}`;
}

export function parseModelKey(key: string): ModelRef | null {
  const colon = key.indexOf(':');
  if (colon < 0) return null;
  const runtime = key.slice(0, colon);
  const id = key.slice(colon + 1);
  if (!id || (runtime !== 'companion' && runtime !== 'wllama' && runtime !== 'webllm')) return null;
  return { runtime, id };
}

export interface GenerateMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
  /** A question's images, as data URLs (companion models that read images only). */
  images?: string[];
  /** A question's recordings, as base64 WAV (companion models that hear only). */
  sounds?: string[];
}

export interface GenerateRequest {
  model: ModelRef;
  messages: GenerateMessage[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
  /** For a reasoning model on the companion (the in-browser engines do not think). */
  reasoning_effort?: ReasoningEffort;
  signal: AbortSignal;
  onDelta: (text: string) => void;
  /** A piece of the thought, before the answer (companion models only). */
  onReasoning?: (text: string) => void;
}

export interface GenerateResult {
  text: string;
  finishReason: string | null;
  promptTokens: number | null;
  completionTokens: number | null;
  /** Reported by the engine; otherwise the caller measures it. */
  tokensPerSecond: number | null;
}

/** A question's content as chat completions (and agent runs) take it: with images, content parts, its images first, then its text. */
export function questionContent(content: string, images: readonly string[] = []): string | UserContentPart[] {
  if (images.length === 0) return content;
  const parts = images.map((url) => ({ type: 'image_url' as const, image_url: { url } }));
  return content ? [...parts, { type: 'text', text: content }] : parts;
}

/** A message as chat completions take it: a question with images is content parts (questionContent). */
function chatMessage({ role, content, images }: GenerateMessage): ChatMessage {
  return role === 'user' ? { role, content: questionContent(content, images) } : { role, content };
}

/** A question with recordings (`sounds`, base64 WAV): an input_audio part for each, before its images and text. */
function withRecordings(message: ChatMessage, sounds: readonly string[] = []): ChatMessage {
  if (message.role !== 'user' || sounds.length === 0) return message;
  const heard = sounds.map((data) => ({ type: 'input_audio' as const, input_audio: { data, format: 'wav' as const } }));
  const rest = typeof message.content !== 'string' ? message.content : message.content ? [{ type: 'text' as const, text: message.content }] : [];
  return { ...message, content: [...heard, ...rest] };
}

export async function generate(request: GenerateRequest): Promise<GenerateResult> {
  const { model, signal, onDelta, temperature, top_p, max_tokens } = request;
  if (model.runtime === 'companion') {
    const { reasoning_effort, onReasoning } = request;
    const messages = request.messages.map((message) => withRecordings(chatMessage(message), message.sounds));
    const result = await streamChat({ model: model.id, messages, signal, onDelta, onReasoning, temperature, top_p, max_tokens, reasoning_effort });
    return {
      text: result.text,
      finishReason: result.finishReason,
      promptTokens: result.usage?.prompt_tokens ?? null,
      completionTokens: result.usage?.completion_tokens ?? null,
      tokensPerSecond: null,
    };
  }
  const engine = engineHost().engine(model.runtime);
  // The in-browser engines read text only (the chat sends them a placeholder for each image).
  const messages = request.messages.map(({ role, content }) => ({ role, content }));
  return engine.chat({ model: model.id, messages, temperature, top_p, max_tokens }, onDelta, signal);
}
