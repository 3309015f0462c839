import { isObject, parseJson } from '../json.js';
import { fieldOf } from '../sse-reader.js';
import type { LineHook } from './relay.js';

/**
 * Reading the assistant's text out of OpenAI-shaped answers that Hearth relays untouched, so an
 * exchange can be recorded (agent attribution) without changing what the client receives.
 */

/** The assistant text of a chat completion or a Responses object. */
export function answerText(json: unknown): string {
  if (!isObject(json)) return '';
  if (Array.isArray(json.choices)) {
    const message = isObject(json.choices[0]) && isObject(json.choices[0].message) ? json.choices[0].message : {};
    return typeof message.content === 'string' ? message.content : '';
  }
  if (typeof json.output_text === 'string') return json.output_text;
  const output = Array.isArray(json.output) ? json.output : [];
  return output
    .filter(isObject)
    .flatMap((item) => (item.type === 'message' && Array.isArray(item.content) ? item.content : []))
    .filter(isObject)
    .map((part) => (part.type === 'output_text' && typeof part.text === 'string' ? part.text : ''))
    .join('');
}

/** The text one SSE data payload adds: a chat chunk's delta content, or a Responses text delta. */
function deltaText(payload: string): string {
  if (!payload.startsWith('{')) return '';
  const json = parseJson(payload);
  if (!isObject(json)) return '';
  if (json.type === 'response.output_text.delta') return typeof json.delta === 'string' ? json.delta : '';
  const choice = Array.isArray(json.choices) && isObject(json.choices[0]) ? json.choices[0] : undefined;
  const delta = choice && isObject(choice.delta) ? choice.delta : undefined;
  return delta && typeof delta.content === 'string' ? delta.content : '';
}

/** The relay's hook (relay.ts) that collects the assistant text a stream carries and hands it to `onEnd` when the stream ends. */
export function textCapture(onEnd: (text: string) => void): LineHook {
  let text = '';
  return {
    line(line) {
      const { field, value } = fieldOf(line);
      if (field === 'data') text += deltaText(value.trim());
      return line;
    },
    end: () => onEnd(text),
  };
}
