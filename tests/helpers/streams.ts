import { expect } from 'vitest';

/**
 * POSTs `body` as JSON, expects 200, and reads the streamed answer until `enough(text so far)`;
 * `rest()` reads it to its end (a connection cut mid-stream rejects there, "terminated").
 */
export async function openStream(url: string, body: object, enough: (text: string) => boolean): Promise<{ rest(): Promise<string> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!enough(text)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended early:\n${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return {
    async rest() {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

/** The JSON payloads of an SSE text's `data:` lines, `[DONE]` as the string. */
export function sseData(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trim())
    .map((payload) => (payload === '[DONE]' ? payload : JSON.parse(payload)));
}
