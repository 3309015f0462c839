import { request, type Agent } from 'node:http';
import { loadavg } from 'node:os';

export interface StreamsRun {
  tokensPerSecond: number;
  /** Median time to the first content token across the streams, ms. */
  firstTokenMs: number;
  tokens: number;
}

let serial = 0;

/** The load averages (1, 5 and 15 minutes), as the benchmarks print them beside their figures. */
export const loadAverages = () =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');

/** A prompt no earlier request used, so no server can answer it from a prompt cache. */
export function uniquePrompt(): string {
  serial++;
  return `Request ${serial}-${process.pid}-${Math.random().toString(36).slice(2, 8)}: tell me a long story about a lighthouse keeper and the sea.`;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** The body of a streamed chat completion that reports its usage at the end, sampled at temperature 0.8; `extra` on top. A message's content may be parts (text, images). */
export function chatBody(
  model: string,
  maxTokens: number,
  messages: { role: string; content: string | object[] }[],
  extra: Record<string, unknown> = {},
): string {
  return JSON.stringify({ model, stream: true, stream_options: { include_usage: true }, max_tokens: maxTokens, temperature: 0.8, messages, ...extra });
}

/**
 * One streamed chat completion over node:http, from `started`: the completion and prompt tokens the
 * usage chunk reports (and the prompt tokens it says came from the server's cache), the time to the
 * first content token, and the reply's text. Rejects on a status other than 200.
 */
export function streamChat(
  url: string,
  body: string,
  agent: Agent | false,
  started: number,
): Promise<{ tokens: number; promptTokens: number; cachedTokens: number; firstMs: number; text: string }> {
  return new Promise((resolve, reject) => {
    let firstMs = 0;
    let completion = 0;
    let prompt = 0;
    let cached = 0;
    let text = '';
    let pending = '';
    const headers = { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...(agent ? {} : { connection: 'close' }) };
    const call = request(`${url}/v1/chat/completions`, { method: 'POST', agent, headers }, (response) => {
      response.setEncoding('utf8');
      response.on('data', (piece: string) => {
        pending += piece;
        const events = pending.split('\n\n');
        pending = events.pop()!;
        for (const event of events) {
          if (!event.startsWith('data: {')) continue;
          const chunk = JSON.parse(event.slice(6)) as {
            choices?: { delta?: { content?: string | null } }[];
            usage?: { completion_tokens: number; prompt_tokens: number; prompt_tokens_details?: { cached_tokens?: number } } | null;
          };
          const content = chunk.choices?.[0]?.delta?.content;
          if (content) {
            if (!firstMs) firstMs = performance.now() - started;
            text += content;
          }
          if (chunk.usage) {
            completion = chunk.usage.completion_tokens;
            prompt = chunk.usage.prompt_tokens;
            cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
          }
        }
      });
      response.on('end', () =>
        response.statusCode === 200
          ? resolve({ tokens: completion, promptTokens: prompt, cachedTokens: cached, firstMs, text })
          : reject(new Error(`HTTP ${response.statusCode}`)),
      );
      response.on('error', reject);
    });
    call.on('error', reject);
    call.end(body);
  });
}

/**
 * `streams` streamed chat completions at once, each on a new connection with a unique prompt;
 * tokens counted from the usage each server reports.
 */
export async function streamsRun(url: string, model: string, tokens: number, streams: number): Promise<StreamsRun> {
  const started = performance.now();
  const one = () => streamChat(url, chatBody(model, tokens, [{ role: 'user', content: uniquePrompt() }]), false, started);
  const results = await Promise.all(Array.from({ length: streams }, one));
  const seconds = (performance.now() - started) / 1000;
  const total = results.reduce((sum, result) => sum + result.tokens, 0);
  return { tokensPerSecond: total / seconds, firstTokenMs: median(results.map((result) => result.firstMs)), tokens: total };
}
