import { request, Agent } from 'node:http';
import type { Run } from './direct.js';
import { chatBody, streamChat } from './streams.js';

const streamAgent = new Agent({ keepAlive: true, maxSockets: 64 });

/** Streams `streams` chat completions at once over HTTP; tokens counted from the usage chunks. */
export async function httpRun(url: string, model: string, prompt: string, tokens: number, streams: number): Promise<Run> {
  const body = chatBody(model, tokens, [{ role: 'user', content: prompt }]);
  const started = performance.now();
  const results = await Promise.all(Array.from({ length: streams }, () => streamChat(url, body, streamAgent, started)));
  const seconds = (performance.now() - started) / 1000;
  const firsts = results.map((result) => result.firstMs).filter((ms) => ms > 0);
  return {
    tokensPerSecond: results.reduce((sum, result) => sum + result.tokens, 0) / seconds,
    firstTokenMs: firsts.length ? Math.min(...firsts) : 0,
    threads: 0,
  };
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
