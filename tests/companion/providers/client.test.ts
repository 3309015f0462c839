import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { HearthError } from '../../../companion/src/errors.js';
import {
  ProviderClient,
  rewriteModelJson,
  rewriteModelStream,
  upstreamError,
  type ProviderConfig,
  type ResolveSecret,
} from '../../../companion/src/providers/client.js';
import { closedPort, mockProviderForTest, startMockProvider, type MockProvider } from '../../helpers/mock-provider.js';
import { sseData } from '../../helpers/streams.js';

const KEY = 'sk-test-0123456789abcdef';
const secrets: Record<string, string> = { 'secret:OPENAI_KEY': KEY };
const resolveSecret: ResolveSecret = (reference) => {
  if (reference.startsWith('env:')) return process.env[reference.slice(4)];
  return secrets[reference];
};

async function readText(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

function streamOf(pieces: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  });
}

/** Splits bytes into pieces of `size`. */
function split(bytes: Uint8Array, size: number): Uint8Array[] {
  const pieces: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return pieces;
}

describe('ProviderClient with a mock OpenAI provider', () => {
  let open: MockProvider;
  let guarded: MockProvider;
  let fixed: MockProvider;

  beforeAll(async () => {
    open = await startMockProvider({ models: ['llama3', 'org/nested-model'] });
    guarded = await startMockProvider({ token: KEY, models: ['gpt-4o-mini', 'text-embedding-3-small'] });
    fixed = await startMockProvider({ models: ['fixed-a', 'fixed-b'], reply: 'Fixed reply here.' });
  });
  afterAll(async () => {
    await Promise.all([open.close(), guarded.close(), fixed.close()]);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    delete process.env.HEARTH_TEST_PROVIDER_KEY;
  });

  function providers(): ProviderConfig[] {
    return [
      { name: 'local-ollama', base_url: open.baseUrl },
      { name: 'openai', base_url: guarded.baseUrl, api_key: 'secret:OPENAI_KEY' },
      { name: 'fixed', base_url: fixed.baseUrl, models: ['fixed-a'] },
    ];
  }

  it('lists discovered and fixed models with Hearth ids, and caches the list for 60 s', async () => {
    const client = new ProviderClient(providers(), resolveSecret);
    const before = guarded.requests.length + open.requests.length + fixed.requests.length;
    const models = await client.listModels();
    expect(models).toEqual([
      { id: 'local-ollama/llama3', provider: 'local-ollama', model: 'llama3', owned_by: 'mock-org' },
      { id: 'local-ollama/org/nested-model', provider: 'local-ollama', model: 'org/nested-model', owned_by: 'mock-org' },
      { id: 'openai/gpt-4o-mini', provider: 'openai', model: 'gpt-4o-mini', owned_by: 'mock-org' },
      { id: 'openai/text-embedding-3-small', provider: 'openai', model: 'text-embedding-3-small', owned_by: 'mock-org' },
      { id: 'fixed/fixed-a', provider: 'fixed', model: 'fixed-a', owned_by: 'fixed' },
    ]);
    // the fixed provider is never asked; the others once each
    expect(fixed.requests.length).toBe(0);
    const listed = guarded.requests.at(-1)!;
    expect(listed.method).toBe('GET');
    expect(listed.path).toBe('/v1/models');
    expect(listed.headers.authorization).toBe(`Bearer ${KEY}`);
    // A base_url is a pool of one endpoint, listed with its load and circuit.
    const one = (url: string) => [{ url, circuit: 'closed', weight: 1, max_concurrent: null, outstanding: 0, failovers: 0, consecutive_failures: 0 }];
    expect(client.status()).toEqual([
      { name: 'local-ollama', base_url: open.baseUrl, ok: true, models: 2, endpoints: one(open.baseUrl) },
      { name: 'openai', base_url: guarded.baseUrl, ok: true, models: 2, endpoints: one(guarded.baseUrl) },
      { name: 'fixed', base_url: fixed.baseUrl, ok: true, models: 1, endpoints: one(fixed.baseUrl) },
    ]);

    const after = guarded.requests.length + open.requests.length + fixed.requests.length;
    expect(after - before).toBe(2);
    await Promise.all([client.listModels(), client.listModels()]);
    expect(guarded.requests.length + open.requests.length + fixed.requests.length).toBe(after);

    const now = Date.now();
    vi.spyOn(Date, 'now').mockReturnValue(now + 61_000);
    await client.listModels();
    expect(guarded.requests.length + open.requests.length + fixed.requests.length).toBe(after + 2);
  });

  it('resolves only ids with a configured provider prefix', () => {
    const client = new ProviderClient(providers(), resolveSecret);
    expect(client.resolve('openai/gpt-4o-mini')).toEqual({ provider: providers()[1], model: 'gpt-4o-mini' });
    expect(client.resolve('local-ollama/org/nested-model')?.model).toBe('org/nested-model');
    expect(client.resolve('llama3')).toBeNull(); // a bare (local) id never reaches a provider
    expect(client.resolve('qwen2.5-0.5b-instruct-q4_k_m.gguf')).toBeNull();
    expect(client.resolve('anthropic/claude')).toBeNull(); // unknown prefix
    expect(client.resolve('openai/')).toBeNull();
    expect(client.resolve('/gpt-4o')).toBeNull();
    expect(client.resolve('OpenAI/gpt-4o')).toBeNull();
  });

  it('forwards a non-streaming chat completion with the key and the provider model name', async () => {
    const client = new ProviderClient(providers(), resolveSecret);
    const body = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], temperature: 0.2 };
    const response = await client.forward('/chat/completions', 'openai/gpt-4o-mini', body, new AbortController().signal);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const received = guarded.requests.at(-1)!;
    expect(received.method).toBe('POST');
    expect(received.path).toBe('/v1/chat/completions');
    expect(received.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(received.headers['content-type']).toBe('application/json');
    expect(received.body).toEqual({ ...body, model: 'gpt-4o-mini' });
    expect(body.model).toBe('openai/gpt-4o-mini'); // the caller's body is not mutated

    const json = rewriteModelJson((await response.json()) as any, 'openai/gpt-4o-mini');
    expect(json.model).toBe('openai/gpt-4o-mini');
    expect(json.object).toBe('chat.completion');
    expect(json.choices[0].message.content).toBe('Hello from the mock provider.');
  });

  it('forwards a streaming chat completion and rewrites every chunk, lines split across writes', async () => {
    const splitting = await mockProviderForTest({ models: ['m1'], splitBytes: 7, reply: 'Grüße aus dem Mock 🙂 fertig' });
    const client = new ProviderClient([{ name: 'split', base_url: splitting.baseUrl }], resolveSecret);
    const body = { model: 'split/m1', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'Hi' }] };
    const response = await client.forward('/chat/completions', 'split/m1', body, new AbortController().signal);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(splitting.requests.at(-1)!.body.model).toBe('m1');
    const events = sseData(await readText(rewriteModelStream(response.body!, 'split/m1')));
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1) as any[];
    expect(chunks.every((chunk) => chunk.model === 'split/m1' && chunk.object === 'chat.completion.chunk')).toBe(true);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
    expect(text).toBe('Grüße aus dem Mock 🙂 fertig');
    const usage = chunks.at(-1);
    expect(usage.choices).toEqual([]);
    expect(usage.usage.total_tokens).toBeGreaterThan(0);
  });

  it('forwards /responses and /embeddings', async () => {
    const client = new ProviderClient(providers(), resolveSecret);
    const signal = new AbortController().signal;
    const plain = await client.forward('/responses', 'fixed/fixed-a', { model: 'fixed/fixed-a', input: 'Hi' }, signal);
    expect(rewriteModelJson(await plain.json(), 'fixed/fixed-a')).toMatchObject({
      object: 'response',
      model: 'fixed/fixed-a',
      output_text: 'Fixed reply here.',
    });
    expect(fixed.requests.at(-1)!.body).toEqual({ model: 'fixed-a', input: 'Hi' });

    const streamed = await client.forward('/responses', 'fixed/fixed-a', { model: 'fixed/fixed-a', input: 'Hi', stream: true }, signal);
    const text = await readText(rewriteModelStream(streamed.body!, 'fixed/fixed-a'));
    expect(text).toContain('event: response.created\n');
    const events = sseData(text) as any[];
    expect(events.map((event) => event.type)).toEqual(['response.created', 'response.output_text.delta', 'response.completed']);
    expect(events[0].response.model).toBe('fixed/fixed-a');
    expect(events[2].response.model).toBe('fixed/fixed-a');

    const embedded = await client.forward('/embeddings', 'openai/text-embedding-3-small', { model: 'x', input: ['a', 'b'] }, signal);
    const json = rewriteModelJson((await embedded.json()) as any, 'openai/text-embedding-3-small');
    expect(json.model).toBe('openai/text-embedding-3-small');
    expect(json.data).toHaveLength(2);
    expect(guarded.requests.at(-1)!.body.model).toBe('text-embedding-3-small');
  });

  it('returns upstream error answers untouched and reads them with upstreamError', async () => {
    const client = new ProviderClient(providers(), resolveSecret);
    const response = await client.forward('/chat/completions', 'openai/no-such-model', { messages: [] }, new AbortController().signal);
    expect(response.status).toBe(404);
    const error = await upstreamError(response, 'openai', [KEY]);
    expect(error).toBeInstanceOf(HearthError);
    expect(error.code).toBe('provider_error');
    expect(error.message).toBe('Provider "openai" answered 404 Not Found: The model `no-such-model` does not exist or you do not have access to it.');
  });

  it('rejects an id without a configured provider as model_not_found', async () => {
    const client = new ProviderClient(providers(), resolveSecret);
    await expect(client.forward('/chat/completions', 'llama3', {}, new AbortController().signal)).rejects.toMatchObject({
      code: 'model_not_found',
      param: 'model',
    });
  });

  it('takes the key from an env: reference', async () => {
    process.env.HEARTH_TEST_PROVIDER_KEY = KEY;
    const client = new ProviderClient([{ name: 'viaenv', base_url: guarded.baseUrl, api_key: 'env:HEARTH_TEST_PROVIDER_KEY' }], resolveSecret);
    expect((await client.listModels()).map((model) => model.id)).toEqual(['viaenv/gpt-4o-mini', 'viaenv/text-embedding-3-small']);
    expect(guarded.requests.at(-1)!.headers.authorization).toBe(`Bearer ${KEY}`);
  });

  it('resolves references in extra headers, and sends them', async () => {
    const client = new ProviderClient([{ name: 'hdr', base_url: open.baseUrl, headers: { 'X-Org': 'acme', 'X-Token': 'secret:OPENAI_KEY' } }], resolveSecret);
    await client.listModels();
    const received = open.requests.at(-1)!;
    expect(received.headers['x-org']).toBe('acme');
    expect(received.headers['x-token']).toBe(KEY);
    expect(received.headers.authorization).toBeUndefined();
  });

  it('skips a provider whose secret is missing, naming the reference but no value', async () => {
    const before = guarded.requests.length;
    const client = new ProviderClient(
      [
        { name: 'nokey', base_url: guarded.baseUrl, api_key: 'secret:MISSING_KEY' },
        { name: 'noenv', base_url: guarded.baseUrl, api_key: 'env:HEARTH_TEST_UNSET_VARIABLE' },
        { name: 'local-ollama', base_url: open.baseUrl },
      ],
      resolveSecret,
    );
    const models = await client.listModels();
    expect(models.map((model) => model.provider)).toEqual(['local-ollama', 'local-ollama']);
    expect(guarded.requests.length).toBe(before); // nothing was sent without the key
    const [nokey, noenv] = client.status();
    expect(nokey).toMatchObject({
      name: 'nokey',
      base_url: guarded.baseUrl,
      ok: false,
      error: 'Provider "nokey" api_key: secret:MISSING_KEY is not set.',
      models: 0,
    });
    expect(noenv!.error).toBe('Provider "noenv" api_key: env:HEARTH_TEST_UNSET_VARIABLE is not set.');
    await expect(client.forward('/chat/completions', 'nokey/gpt-4o-mini', {}, new AbortController().signal)).rejects.toMatchObject({
      code: 'provider_error',
      message: expect.stringContaining('secret:MISSING_KEY'),
    });
  });

  it('refuses a literal api_key without echoing it', async () => {
    const client = new ProviderClient([{ name: 'literal', base_url: guarded.baseUrl, api_key: KEY }], resolveSecret);
    await client.listModels();
    const [status] = client.status();
    expect(status!.ok).toBe(false);
    expect(status!.error).toContain('must be a reference');
    expect(JSON.stringify(client.status())).not.toContain(KEY);
  });

  it('keeps a rejected key out of the status error', async () => {
    const wrong = 'sk-wrong-key-abcdef123456';
    const client = new ProviderClient([{ name: 'bad', base_url: guarded.baseUrl, api_key: 'secret:BAD' }], (ref) => (ref === 'secret:BAD' ? wrong : undefined));
    expect(await client.listModels()).toEqual([]);
    const [status] = client.status();
    expect(status!.ok).toBe(false);
    expect(status!.error).toMatch(/^Provider "bad" answered 401 Unauthorized: Incorrect API key provided/);
    expect(JSON.stringify(client.status())).not.toContain(wrong);
  });

  it('reports an unreachable provider as provider_unreachable, ended by the refusal itself, without the key', async () => {
    const port = await closedPort();
    // Each request's signal, and whether it had been aborted when the request failed.
    const attempts: { signal: AbortSignal; abortedAtFailure?: boolean }[] = [];
    const spied: typeof fetch = async (input, init) => {
      const attempt: (typeof attempts)[number] = { signal: init!.signal! };
      attempts.push(attempt);
      try {
        return await fetch(input, init);
      } catch (error) {
        attempt.abortedAtFailure = attempt.signal.aborted;
        throw error;
      }
    };
    const client = new ProviderClient(
      [{ name: 'gone', base_url: `http://user:pw@127.0.0.1:${port}/v1?tenant=x`, api_key: 'secret:OPENAI_KEY' }],
      resolveSecret,
      spied,
    );
    const error = await client.forward('/chat/completions', 'gone/m', { messages: [] }, new AbortController().signal).catch((e: unknown) => e);
    // One attempt, which the refused connection ended: no retry, and no timer or abort ended it.
    expect(attempts.map((attempt) => attempt.abortedAtFailure)).toEqual([false]);
    expect(error).toBeInstanceOf(HearthError);
    expect((error as HearthError).code).toBe('provider_unreachable');
    expect((error as HearthError).message).toBe(`Provider "gone" (127.0.0.1:${port}) could not be reached: ECONNREFUSED.`);
    expect((error as HearthError).message).not.toContain(KEY);

    expect(await client.listModels()).toEqual([]);
    const [status] = client.status();
    expect(status).toMatchObject({ name: 'gone', base_url: `http://127.0.0.1:${port}/v1`, ok: false, models: 0 });
    expect(status!.error).toContain('could not be reached: ECONNREFUSED');
    expect(JSON.stringify(status)).not.toContain(KEY);
    expect(JSON.stringify(status)).not.toContain('pw');
  });

  it('does not follow redirects, so secret headers never reach another origin', async () => {
    const target = await mockProviderForTest({ prefix: '' });
    const redirecting = await mockProviderForTest({ redirectTo: `http://127.0.0.1:${target.port}` });
    const client = new ProviderClient(
      [{ name: 'moved', base_url: redirecting.baseUrl, api_key: 'secret:OPENAI_KEY', headers: { 'X-Api-Key': 'secret:OPENAI_KEY' } }],
      resolveSecret,
    );
    const error = await client.forward('/chat/completions', 'moved/m', {}, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'provider_unreachable',
      message: `Provider "moved" (127.0.0.1:${redirecting.port}) could not be reached: unexpected redirect.`,
    });
    expect(target.requests).toHaveLength(0);
  });

  it('aborting mid-stream closes the upstream connection', async () => {
    const slow = await mockProviderForTest({ models: ['slow'], chunkDelayMs: 30, reply: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ') });
    const client = new ProviderClient([{ name: 'slow', base_url: slow.baseUrl }], resolveSecret);
    const controller = new AbortController();
    const response = await client.forward('/chat/completions', 'slow/slow', { stream: true, messages: [] }, controller.signal);
    const reader = rewriteModelStream(response.body!, 'slow/slow').getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"model":"slow/slow"');
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    const received = slow.requests.at(-1)!;
    await received.done;
    expect(received.closedEarly).toBe(true);
    expect(received.finished).toBe(false);
  });

  it('cancelling the relayed stream also closes the upstream connection', async () => {
    const slow = await mockProviderForTest({ models: ['slow'], chunkDelayMs: 30, reply: Array.from({ length: 200 }, (_, i) => `w${i}`).join(' ') });
    const client = new ProviderClient([{ name: 'slow', base_url: slow.baseUrl }], resolveSecret);
    const response = await client.forward('/chat/completions', 'slow/slow', { stream: true, messages: [] }, new AbortController().signal);
    const reader = rewriteModelStream(response.body!, 'slow/slow').getReader();
    await reader.read();
    await reader.cancel();
    const received = slow.requests.at(-1)!;
    await received.done;
    expect(received.closedEarly).toBe(true);
  });

  it('an abort before the answer rejects with the abort reason, not a provider error', async () => {
    const slow = await mockProviderForTest({ models: ['slow'] });
    const client = new ProviderClient([{ name: 'slow', base_url: slow.baseUrl }], resolveSecret);
    const controller = new AbortController();
    controller.abort();
    const error = await client.forward('/chat/completions', 'slow/slow', {}, controller.signal).catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(HearthError);
    expect((error as Error).name).toBe('AbortError');
  });

  it('a provider that does not start answering in time is provider_unreachable', async () => {
    const silent = await mockProviderForTest({ models: ['m'], headerDelayMs: 2_000 });
    const client = new ProviderClient([{ name: 'silent', base_url: silent.baseUrl, timeout_ms: 200 }], resolveSecret);
    const error = await client.forward('/chat/completions', 'silent/m', { stream: true }, new AbortController().signal).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'provider_unreachable', message: `Provider "silent" (127.0.0.1:${silent.port}) did not answer within 200 ms.` });
    await silent.requests.at(-1)!.done;
    expect(silent.requests.at(-1)!.closedEarly).toBe(true);
    expect(await client.listModels()).toEqual([]);
    expect(client.status()[0]!.error).toContain('did not answer within');
  });

  it('the whole-request limit breaks off a stream that runs too long, ending it with one error event', async () => {
    const slow = await mockProviderForTest({ models: ['slow'], chunkDelayMs: 1_000 });
    const client = new ProviderClient([{ name: 'slow', base_url: slow.baseUrl, timeout_ms: 300 }], resolveSecret);
    const response = await client.forward('/chat/completions', 'slow/slow', { stream: true }, new AbortController().signal);
    // headers came; the whole-request limit then breaks the body off, and the stream says so last
    const events = sseData(await readText(response.body!));
    expect(events.at(-1)).toMatchObject({ error: { code: 'provider_interrupted', type: 'server_error', message: expect.stringContaining('300 ms') } });
    expect(events).not.toContain('[DONE]');
  });
});

describe('rewriteModelStream', () => {
  const sse = [
    ': keep-alive comment\n\n',
    'data: {"id":"c1","object":"chat.completion.chunk","model":"gpt-4o","choices":[{"index":0,"delta":{"content":"a \\"model\\": b ✓"}}]}\n\n',
    'data:{"id":"c1","model":"gpt-4o","choices":[]}\r\n\r\n',
    'event: response.created\ndata: {"type":"response.created","response":{"model":"gpt-4o","tools":[{"parameters":{"properties":{"model":{"type":"string"}}}}]}}\n\n',
    'data: not json with "model"\n\n',
    'data: {"model": 42}\n\n',
    'data: [DONE]\n\n',
  ].join('');
  const expected = [
    ': keep-alive comment\n\n',
    'data: {"id":"c1","object":"chat.completion.chunk","model":"p/gpt-4o","choices":[{"index":0,"delta":{"content":"a \\"model\\": b ✓"}}]}\n\n',
    'data:{"id":"c1","model":"p/gpt-4o","choices":[]}\r\n\r\n',
    'event: response.created\ndata: {"type":"response.created","response":{"model":"p/gpt-4o","tools":[{"parameters":{"properties":{"model":{"type":"string"}}}}]}}\n\n',
    'data: not json with "model"\n\n',
    'data: {"model": 42}\n\n',
    'data: [DONE]\n\n',
  ].join('');

  it.each([1, 2, 3, 5, 13, 64, 100_000])('gives the same output whatever the chunk size (%i bytes)', async (size) => {
    const bytes = new TextEncoder().encode(sse);
    expect(await readText(rewriteModelStream(streamOf(split(bytes, size)), 'p/gpt-4o'))).toBe(expected);
  });

  it('does not hold back complete lines, and flushes an unterminated last line', async () => {
    const encoder = new TextEncoder();
    let push!: (text: string | null) => void;
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        push = (text) => (text === null ? controller.close() : controller.enqueue(encoder.encode(text)));
      },
    });
    const reader = rewriteModelStream(source, 'p/m').getReader();
    push('data: {"model":"m","n":1}\n\ndata: {"mod');
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"model":"p/m","n":1}\n\n');
    push('el":"m","n":2}');
    push(null);
    expect(new TextDecoder().decode((await reader.read()).value)).toBe('data: {"model":"p/m","n":2}');
    expect((await reader.read()).done).toBe(true);
  });
});

describe('rewriteModelJson', () => {
  it('rewrites the top-level model and response.model only, without mutating', () => {
    const input = { model: 'm', nested: { model: 'keep' } };
    expect(rewriteModelJson(input, 'p/m')).toEqual({ model: 'p/m', nested: { model: 'keep' } });
    expect(input.model).toBe('m');
    expect(rewriteModelJson({ type: 'x', response: { model: 'm' } }, 'p/m')).toEqual({ type: 'x', response: { model: 'p/m' } });
    expect(rewriteModelJson([1], 'p/m')).toEqual([1]);
    expect(rewriteModelJson(null, 'p/m')).toBeNull();
  });
});
