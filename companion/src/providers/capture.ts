import { isObject, parseJson } from '../json.js';

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

/** Passes an SSE byte stream through unchanged and hands the assistant text it carried to `onEnd` when it ends. */
export function captureStreamText(body: ReadableStream<Uint8Array>, onEnd: (text: string) => void): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let pending = '';
  let text = '';
  const read = (lines: string) => {
    for (const line of lines.split('\n')) {
      const clean = line.endsWith('\r') ? line.slice(0, -1) : line;
      if (clean.startsWith('data:')) text += deltaText(clean.slice(5).trim());
    }
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        controller.enqueue(chunk);
        // Only the new text is searched for a line end (a long line costs its length once).
        const text = decoder.decode(chunk, { stream: true });
        const end = text.lastIndexOf('\n');
        if (end < 0) {
          pending += text;
          return;
        }
        read(pending + text.slice(0, end));
        pending = text.slice(end + 1);
      },
      flush() {
        read(pending + decoder.decode());
        onEnd(text);
      },
    }),
  );
}
