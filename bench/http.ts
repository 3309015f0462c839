import { request, Agent } from 'node:http';
import type { Run } from './direct.js';

const streamAgent = new Agent({ keepAlive: true, maxSockets: 64 });

/** Streams `streams` chat completions at once over HTTP; tokens counted from the usage chunks. */
export async function httpRun(url: string, model: string, prompt: string, tokens: number, streams: number): Promise<Run> {
  const body = JSON.stringify({
    model,
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: tokens,
    temperature: 0.8,
    messages: [{ role: 'user', content: prompt }],
  });
  const started = performance.now();
  let first = 0;
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const call = request(
        `${url}/v1/chat/completions`,
        { method: 'POST', agent: streamAgent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (response) => {
          let pending = '';
          let completion = 0;
          response.setEncoding('utf8');
          response.on('data', (piece: string) => {
            pending += piece;
            const lines = pending.split('\n\n');
            pending = lines.pop()!;
            for (const line of lines) {
              if (!line.startsWith('data: {')) continue;
              const chunk = JSON.parse(line.slice(6)) as { choices: { delta: { content?: string } }[]; usage?: { completion_tokens: number } | null };
              if (!first && chunk.choices[0]?.delta.content) first = performance.now() - started;
              if (chunk.usage) completion = chunk.usage.completion_tokens;
            }
          });
          response.on('end', () => resolve(completion));
          response.on('error', reject);
        },
      );
      call.on('error', reject);
      call.end(body);
    });
  const counts = await Promise.all(Array.from({ length: streams }, one));
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
