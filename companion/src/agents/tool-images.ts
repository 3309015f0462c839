/**
 * Images in tool results (an MCP tool's `image` blocks), as an agent's model gets them. The
 * result's text is the call's recorded output, where each image stands as a note
 * (`[image: image/png, 1234 bytes]`). A local model whose projector reads images (capability
 * `vision`) also gets each image right after its note, checked as a request's images are
 * (media-check.ts); an image that fails the check stays a note, with the reason, so the run goes
 * on. Any other model (one without vision, a provider's, which may not take images in a tool
 * result) reads the notes only.
 */
import { checkedImage } from '../generation/media-check.js';
import type { HistoryItem, MediaPart } from '../inference/types.js';
import { resultContent, type ToolResult } from '../tools/result.js';
import type { AgentModel } from './model.js';

/** The history item of a call's result: its text (the recorded output, `limit` bytes at most) and, for a model with vision, its images. */
export async function toolResultItem(
  call: { id: string; name: string },
  result: ToolResult,
  limit: number,
  model: Pick<AgentModel, 'vision'>,
): Promise<HistoryItem> {
  const { text, images } = resultContent(result, limit);
  if (!model.vision || images.length === 0) return { role: 'tool', callId: call.id, output: text };
  const media: MediaPart[] = [];
  const refused: string[] = [];
  for (const image of images) {
    const param = `the result of ${call.name}, content[${image.block}]`;
    try {
      media.push(await checkedImage({ kind: 'image', data: image.data, mime: image.mime, offset: image.offset, param }));
    } catch (error) {
      refused.push(`[${error instanceof Error ? error.message : String(error)} It is left out.]`);
    }
  }
  const output = refused.length > 0 ? `${text}\n${refused.join('\n')}` : text;
  return { role: 'tool', callId: call.id, output, ...(media.length > 0 ? { media } : {}) };
}

/**
 * A stored conversation as this model takes it: a tool result's images stay for a model with
 * vision (their notes stay in the text either way); a user message's images stay for a model
 * with vision and for a provider's (the caller sent them), and are left out for a local model
 * without vision (an earlier run's model may have had it).
 */
export function historyFor(model: Pick<AgentModel, 'vision' | 'local'>, history: HistoryItem[]): HistoryItem[] {
  return history.map((item) => {
    if ((item.role !== 'user' && item.role !== 'tool') || !item.media) return item;
    if (model.vision || (item.role === 'user' && !model.local)) return item;
    const { media: _media, ...rest } = item;
    return rest;
  });
}
