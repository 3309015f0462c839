/**
 * A prompt with images or sounds, as llama-server's /completion takes it: `{prompt_string,
 * multimodal_data}`, the text holding the process's media marker once per item (put there when the
 * history was rendered) and the items' bytes in base64, in the same order. That branch tokenises
 * the text itself (special tokens parsed, BOS added), so the rendered prompt goes as text, with its
 * special tokens written out and without its own BOS.
 */
import type { LlamaModel, LlamaText } from 'node-llama-cpp';
import { binding } from '../binding.js';
import type { MediaPart } from '../types.js';

export interface MediaPrompt {
  prompt_string: string;
  multimodal_data: string[];
}

/** The rendered prompt (and `after`, text the engine wrote or the model generated since) as a multimodal prompt. */
export function mediaPrompt(model: LlamaModel, prompt: LlamaText, after: string, media: MediaPart[]): MediaPrompt {
  const { SpecialToken, SpecialTokensText } = binding();
  const text = prompt.values
    .map((value, index) => {
      if (typeof value === 'string') return value;
      if (value instanceof SpecialTokensText) return value.value;
      if (value instanceof SpecialToken) return index === 0 && value.value === 'BOS' ? '' : model.detokenize(value.tokenize(model.tokenizer), true);
      return '';
    })
    .join('');
  return { prompt_string: text + after, multimodal_data: media.map((part) => part.data.toString('base64')) };
}
