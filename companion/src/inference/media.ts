/**
 * Images and sounds in a conversation, as both engines see them. Only llama-server runs a model's
 * projector (llama.cpp's multimodal library, mtmd): a message's (or a tool result's) media reach it as one marker each
 * in the prompt's text (the process's own marker, random per process) and their bytes beside the
 * prompt. In process, and on a model without a projector, a request with media is refused with
 * the reason, never answered as if the media were not there.
 */
import { HearthError } from '../errors.js';
import type { GenerationRequest, MediaPart, ModelFile } from './types.js';

/**
 * The media of a request's messages and tool results, in prompt order: a tool result renders in
 * the assistant turn that called it (chat-history.ts), at its call's place, so its media go there
 * too, whatever order the results came in.
 */
export function requestMedia(request: Pick<GenerationRequest, 'history'>): MediaPart[] {
  const runs: MediaPart[][] = [];
  const calls = new Map<string, MediaPart[]>();
  // Within an item, the markers go in the order of the parts' offsets (withMediaMarkers).
  const ordered = (media: MediaPart[]) => [...media].sort((a, b) => a.offset - b.offset);
  for (const item of request.history) {
    if (item.role === 'user') runs.push(ordered(item.media ?? []));
    else if (item.role === 'assistant')
      for (const call of item.toolCalls) {
        const run: MediaPart[] = [];
        calls.set(call.id, run);
        runs.push(run);
      }
    else if (item.role === 'tool' && item.media) {
      // A result for no call is refused when the history is rendered; until then its media keep their order.
      const run = calls.get(item.callId);
      if (run) run.push(...ordered(item.media));
      else runs.push(ordered(item.media));
    }
  }
  return runs.flat();
}

/**
 * A user message's text (or a tool result's output) with the marker at each media part's place;
 * without a marker (a count of the text's tokens, a model that cannot take media, which
 * Engine.run refuses first) the text alone.
 */
export function withMediaMarkers(item: { text: string; media?: MediaPart[] }, marker: string | undefined): string {
  const media = item.media ?? [];
  if (media.length === 0 || !marker) return item.text;
  const parts: string[] = [];
  let at = 0;
  for (const part of [...media].sort((a, b) => a.offset - b.offset)) {
    const offset = Math.max(at, Math.min(part.offset, item.text.length));
    parts.push(item.text.slice(at, offset), marker);
    at = offset;
  }
  parts.push(item.text.slice(at));
  return parts.join('');
}

const words = { image: 'images', audio: 'audio' } as const;

/**
 * Why `info` cannot take the request's media as it runs now, or undefined: no projector (or one
 * for the other kind), or the in-process engine (`engine`, with the reason it was chosen).
 */
export function mediaRefusal(info: ModelFile, media: MediaPart[], engine?: { kind: 'server' | 'in-process'; reason: string }): HearthError | undefined {
  if (media.length === 0) return undefined;
  const kinds = [...new Set(media.map((part) => part.kind))];
  const missing = kinds.find((kind) => !info.capabilities.includes(kind === 'image' ? 'vision' : 'audio'));
  if (missing)
    return new HearthError(
      'invalid_request_error',
      `${info.id} cannot take ${words[missing]}: it has no multimodal projector for them (an mmproj .gguf beside the model file, or models.overrides.${info.id}.projector). Send text only, or choose a model whose capabilities in GET /v1/models include ${missing === 'image' ? 'vision' : 'audio'}.`,
      { param: 'messages' },
    );
  if (engine?.kind === 'in-process')
    return new HearthError(
      'invalid_request_error',
      `${info.id} takes ${words[kinds[0]!]} only on the llama-server engine (it runs the model's projector), and the in-process engine runs it now: ${engine.reason} Send text only, or let the llama-server engine run it (models.engine auto or server, once its build is ready).`,
      { param: 'messages' },
    );
  return undefined;
}
