/**
 * A conversation survives a restart of the companion on the llama-server engine: `hearth serve`
 * stopped cleanly saves its model's slots, and the next `hearth serve` on the same data folder
 * restores the conversation when its next turn arrives, so that turn evaluates only its new tokens
 * (llama-server's own prompt counters, in GET /admin/status). Needs the llama-server build.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { startServer, type RunningServer } from '../helpers/server.js';

const started: RunningServer[] = [];
afterAll(async () => {
  for (const server of started) await server.stop();
});

async function companion(dataDir?: string): Promise<RunningServer> {
  const server = await startServer({ env: { HEARTH_ENGINE: 'server' }, ...(dataDir ? { dataDir } : {}) });
  started.push(server);
  return server;
}

async function promptCounters(server: RunningServer) {
  const status = (await (await fetch(`${server.url}/admin/status`)).json()) as ServerStatus;
  return status.loaded.find((model) => model.id === 'tiny')!.prompt_tokens!;
}

const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are a careful assistant. '.repeat(30) },
  { role: 'user', content: 'First question' },
];

describe('a conversation across a restart of the companion', () => {
  it('is restored from its saved slot: the next turn evaluates only its new tokens', async () => {
    const first = await companion();
    const client = (server: RunningServer) => new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused' });
    const answer = await client(first).chat.completions.create({ model: 'tiny', max_tokens: 8, temperature: 0, messages });
    const history = answer.usage!.prompt_tokens;
    expect(await first.stop()).toBe(0);
    const slots = join(first.dataDir, 'engine', 'slots');
    const [folder] = readdirSync(slots);
    expect(statSync(join(slots, folder!)).mode & 0o777).toBe(0o700);
    expect(readdirSync(join(slots, folder!)).filter((file) => file.endsWith('.bin'))).toHaveLength(1);

    const second = await companion(first.dataDir);
    const next = await client(second).chat.completions.create({
      model: 'tiny',
      max_tokens: 8,
      temperature: 0,
      messages: [...messages, { role: 'assistant', content: answer.choices[0]!.message.content ?? '' }, { role: 'user', content: 'Second question' }],
    });
    expect(next.choices[0]!.message.content).toBeTruthy();
    const counters = await promptCounters(second);
    expect(counters.reused).toBeGreaterThanOrEqual(history);
    expect(counters.evaluated).toBeLessThan(next.usage!.prompt_tokens - history + 12);
  });
});
