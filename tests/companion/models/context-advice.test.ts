/**
 * A prompt that does not fit the model's context is refused with advice that fits the cause: a
 * long conversation is shortened, but when the system prompt, the tools and the latest message
 * alone do not fit (an agent's one-message task, say), only a larger context or fewer tools help.
 */
import { describe, expect, it } from 'vitest';
import { configuredDataDir } from '../../helpers/server.js';
import { sharedApp } from '../../helpers/app.js';

const harness = sharedApp({
  prepare: async () => ({ dataDir: await configuredDataDir('models:\n  external_sources: false\n  threads: 1\n  context_size: 1024\n') }),
});

const LONG = 'Remember every detail of this instruction. '.repeat(150);
const tool = (name: string) => ({
  type: 'function',
  function: { name, description: LONG.slice(0, 400), parameters: { type: 'object', properties: { path: { type: 'string' } } } },
});

async function refusal(payload: Record<string, unknown>): Promise<string> {
  const response = await harness.app.inject({ method: 'POST', url: '/v1/chat/completions', payload: { model: 'tiny', max_tokens: 4, ...payload } });
  expect(response.statusCode, response.body).toBe(400);
  const error = (response.json() as { error: { code: string; message: string } }).error;
  expect(error.code).toBe('context_length_exceeded');
  return error.message;
}

describe('advice when a prompt does not fit', () => {
  it('a one-message task whose system prompt and tools do not fit: load the model with a larger context, or fewer tools', async () => {
    const message = await refusal({
      messages: [
        { role: 'system', content: LONG },
        { role: 'user', content: 'List the files.' },
      ],
      tools: [tool('list_files'), tool('read_file')],
    });
    expect(message).toMatch(/^The messages use \d+ tokens, but tiny has a context of 1024 tokens\. /);
    expect(message).toMatch(/\. The system prompt, the 2 tools offered and the latest message alone take \d+: shortening the conversation cannot help\./);
    expect(message).toContain('Load tiny with a larger context');
    expect(message).toContain('offer fewer tools');
    expect(message).not.toContain('Shorten the conversation');
  });

  it('without tools it names the system prompt and the message', async () => {
    const message = await refusal({
      messages: [
        { role: 'system', content: LONG },
        { role: 'user', content: 'Hello' },
      ],
    });
    expect(message).toContain('The system prompt and the latest message alone take');
    expect(message).not.toContain('fewer tools');
  });

  it('a long conversation of short messages is still told to shorten the conversation', async () => {
    const turns = Array.from({ length: 60 }, (_, index) => ({ role: index % 2 ? 'assistant' : 'user', content: `Message ${index}: ${LONG.slice(0, 200)}` }));
    const message = await refusal({ messages: [...turns, { role: 'user', content: 'And now?' }] });
    expect(message).toMatch(/The messages use \d+ tokens, but tiny has a context of 1024 tokens\. Shorten the conversation or start a new one\./);
  });
});
