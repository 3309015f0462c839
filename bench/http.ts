import { request, Agent } from 'node:http';
import type { Run } from './direct.js';

/** Streams `streams` chat completions at once over HTTP; tokens counted from the usage chunks. */
export async function httpRun(url: string, model: string, prompt: string, tokens: number, streams: number): Promise<Run> {
  const started = performance.now();
  let first = 0;
  const counts = await Promise.all(
    Array.from({ length: streams }, async () => {
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, max_tokens: tokens, temperature: 0.8, messages: [{ role: 'user', content: prompt }] }),
      });
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        const piece = decoder.decode(value, { stream: true });
        if (!first && piece.includes('"content":"') && !piece.includes('"content":""')) first = performance.now() - started;
        text += piece;
      }
      const usage = /"completion_tokens":(\d+)/.exec(text);
      return usage ? Number(usage[1]) : 0;
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { tokensPerSecond: counts.reduce((a, b) => a + b, 0) / seconds, firstTokenMs: first, threads: 0 };
}

/** Keep-alive GET requests from 8 concurrent loops for `ms` milliseconds. */
export async function requestsPerSecond(url: string, ms: number): Promise<number> {
  const agent = new Agent({ keepAlive: true, maxSockets: 8 });
  const deadline = performance.now() + ms;
  let done = 0;
  const get = () =>
    new Promise<void>((resolve, reject) => {
      request(url, { agent }, (response) => {
        response.resume();
        response.on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (performance.now() < deadline) {
        await get();
        done++;
      }
    }),
  );
  agent.destroy();
  return done / (ms / 1000);
}
