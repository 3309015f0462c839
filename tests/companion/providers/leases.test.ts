import { describe, expect, it } from 'vitest';
import { ProviderClient, type ProviderConfig } from '../../../companion/src/providers/client.js';
import { ProviderPools } from '../../../companion/src/providers/pools.js';
import { sseData } from '../../helpers/streams.js';

/*
 * Every attempt on a pool endpoint holds it (its busy count, `outstanding`, which routing and
 * max_concurrent read) and gives it back on every way out (issue 33, item 3). The hold was given
 * back by hand at eight places in client.ts: one path that missed it kept the endpoint busy
 * forever, and with max_concurrent it took no more requests. Each test ends with every busy
 * count back at 0.
 */

const MIB = 1024 * 1024;
const encoder = new TextEncoder();
const resolveSecret = (reference: string) => (reference === 'secret:KEY' ? 'sk-lease-test-0123456789' : undefined);
const pool: ProviderConfig = { name: 'gpu', endpoints: [{ url: 'http://a.example/v1' }, { url: 'http://b.example/v1' }] };
const single: ProviderConfig = { name: 'one', base_url: 'http://one.example/v1' };

type Answer = (url: URL, init: RequestInit) => Response | Promise<Response>;

/** A client over scripted endpoints (by host), and the busy counts of every endpoint. */
function setup(answer: Answer, providers: ProviderConfig[] = [pool, single]) {
  const fetchImpl = (async (input: URL, init: RequestInit) => answer(input, init)) as unknown as typeof fetch;
  const pools = new ProviderPools(resolveSecret, { fetch: fetchImpl, checks: false });
  pools.configure(providers);
  const client = new ProviderClient(providers, resolveSecret, fetchImpl, pools);
  const busy = () => providers.flatMap((provider) => pools.pool(provider).endpoints.map((endpoint) => endpoint.outstanding));
  return { client, busy };
}

const sse = (text: string) => new Response(text, { headers: { 'content-type': 'text/event-stream' } });
const json = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
const chunk = 'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n';
const streamed = { stream: true, messages: [] };
const live = () => new AbortController().signal;

/** A stream that sends one chunk, then nothing until the request's signal aborts it. */
function hanging(init: RequestInit): Response {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(encoder.encode(chunk));
      init.signal?.addEventListener('abort', () => controller.error(init.signal!.reason), { once: true });
    },
  });
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
}

describe('an endpoint is held while its answer streams and given back on every way out', () => {
  it('success: held while the stream is read, free once it ended', async () => {
    const { client, busy } = setup(() => sse(`${chunk}data: [DONE]\n\n`));
    const response = await client.forward('/chat/completions', 'gpu/m', streamed, live());
    expect(busy()).toEqual([1, 0, 0]);
    expect(sseData(await response.text()).at(-1)).toBe('[DONE]');
    await expect.poll(busy).toEqual([0, 0, 0]);
  });

  it('success as JSON, on a single base_url', async () => {
    const { client, busy } = setup(() => json({ choices: [{ message: { content: 'hi' } }] }));
    const response = await client.forward('/chat/completions', 'one/m', { messages: [] }, live());
    expect(await response.json()).toMatchObject({ choices: [{ message: { content: 'hi' } }] });
    await expect.poll(busy).toEqual([0, 0, 0]);
  });

  it.each([400, 404, 500, 503])('a provider error (%i) relayed to the client', async (status) => {
    const { client, busy } = setup(() => json({ error: { message: 'no' } }, status));
    const response = await client.forward('/chat/completions', 'one/m', streamed, live());
    expect(response.status).toBe(status);
    await response.text();
    expect(busy()).toEqual([0, 0, 0]);
  });

  it('a 5xx that fails over to the next endpoint, which answers', async () => {
    const { client, busy } = setup((url) => (url.host === 'a.example' ? json({ error: { message: 'down' } }, 502) : sse(`${chunk}data: [DONE]\n\n`)));
    const response = await client.forward('/chat/completions', 'gpu/m', streamed, live());
    expect(busy()).toEqual([0, 1, 0]);
    await response.text();
    await expect.poll(busy).toEqual([0, 0, 0]);
  });

  it('no endpoint reachable: provider_unreachable after trying each', async () => {
    const { client, busy } = setup(() => {
      throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    });
    await expect(client.forward('/chat/completions', 'gpu/m', streamed, live())).rejects.toMatchObject({ code: 'provider_unreachable' });
    expect(busy()).toEqual([0, 0, 0]);
  });

  it('the client aborts before the answer', async () => {
    const controller = new AbortController();
    const { client, busy } = setup(() => {
      controller.abort();
      throw new DOMException('aborted', 'AbortError');
    });
    await expect(client.forward('/chat/completions', 'gpu/m', streamed, controller.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(busy()).toEqual([0, 0, 0]);
  });

  it('the client aborts mid-stream', async () => {
    const controller = new AbortController();
    const { client, busy } = setup((_url, init) => hanging(init));
    const response = await client.forward('/chat/completions', 'gpu/m', streamed, controller.signal);
    const reader = response.body!.getReader();
    await reader.read();
    expect(busy()).toEqual([1, 0, 0]);
    controller.abort();
    await expect(reader.read()).rejects.toThrow();
    await expect.poll(busy).toEqual([0, 0, 0]);
  });

  it('the client cancels the relayed stream mid-answer', async () => {
    const { client, busy } = setup((_url, init) => hanging(init));
    const response = await client.forward('/chat/completions', 'gpu/m', streamed, live());
    const reader = response.body!.getReader();
    await reader.read();
    await reader.cancel();
    await expect.poll(busy).toEqual([0, 0, 0]);
  });

  it('the stream breaks after it began (provider_interrupted)', async () => {
    const { client, busy } = setup(() => {
      let sent = false;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent) return controller.error(new TypeError('terminated'));
          sent = true;
          controller.enqueue(encoder.encode(chunk));
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    const response = await client.forward('/chat/completions', 'gpu/m', streamed, live());
    expect(sseData(await response.text()).at(-1)).toMatchObject({ error: { code: 'provider_interrupted' } });
    await expect.poll(busy).toEqual([0, 0, 0]);
  });

  it('a line past 32 MiB ends the stream (provider_interrupted)', async () => {
    const piece = encoder.encode('x'.repeat(MIB));
    const { client, busy } = setup(() => {
      let first = true;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          controller.enqueue(first ? encoder.encode('data: ') : piece);
          first = false;
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    });
    const response = await client.forward('/chat/completions', 'gpu/m', streamed, live());
    expect(sseData(await response.text()).at(-1)).toMatchObject({ error: { code: 'provider_interrupted', message: expect.stringContaining('32 MiB') } });
    await expect.poll(busy).toEqual([0, 0, 0]);
  });

  it('a provider whose secret cannot be resolved (nothing is sent)', async () => {
    const { client, busy } = setup(() => json({}), [{ name: 'locked', base_url: 'http://locked.example/v1', api_key: 'secret:MISSING' }]);
    await expect(client.forward('/chat/completions', 'locked/m', streamed, live())).rejects.toBeDefined();
    expect(busy()).toEqual([0]);
  });

  it('images: an answer that is not JSON, and one that is', async () => {
    let text = 'not json';
    const { client, busy } = setup(() => new Response(text, { headers: { 'content-type': 'application/json' } }));
    await expect(client.images('/images/generations', 'gpu/img', { prompt: 'a cat' }, live())).rejects.toMatchObject({ code: 'provider_error' });
    expect(busy()).toEqual([0, 0, 0]);
    text = '{"data":[]}';
    await expect(client.images('/images/generations', 'gpu/img', { prompt: 'a cat' }, live())).resolves.toEqual({ data: [] });
    expect(busy()).toEqual([0, 0, 0]);
  });

  it('model lists, good and failing, and requests whose body the caller reads later', async () => {
    const { client, busy } = setup((url) => (url.host === 'one.example' ? json({ error: { message: 'no' } }, 401) : json({ data: [{ id: 'm' }] })));
    expect((await client.listModels()).map((model) => model.id)).toEqual(['gpu/m']);
    expect(busy()).toEqual([0, 0, 0]);
    const response = await client.request('gpu', '/videos/v1', { method: 'GET' });
    expect(busy()).toEqual([0, 0, 0]);
    expect(await response.json()).toEqual({ data: [{ id: 'm' }] });
  });

  it('with max_concurrent 1, an endpoint takes the next request once the previous one ended any of these ways', async () => {
    const limited: ProviderConfig = { name: 'tight', endpoints: [{ url: 'http://t.example/v1', max_concurrent: 1 }] };
    let status = 500;
    const { client, busy } = setup(() => (status === 200 ? sse(`${chunk}data: [DONE]\n\n`) : json({ error: { message: 'no' } }, status)), [limited]);
    for (const next of [500, 400, 200, 500, 200]) {
      status = next;
      const response = await client.forward('/chat/completions', 'tight/m', streamed, live());
      await response.text();
      await expect.poll(busy).toEqual([0]);
    }
  });
});
