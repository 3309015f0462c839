import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import { closeServer } from './http-server.js';

/**
 * A real HTTP server on 127.0.0.1 speaking OpenAI's documented wire format, for
 * testing Hearth's model providers: GET /v1/models, POST /v1/chat/completions
 * (JSON, or SSE with an optional usage chunk and `data: [DONE]`), POST /v1/completions (JSON), POST /v1/responses
 * (minimal, JSON or SSE events), POST /v1/embeddings, POST /v1/audio/transcriptions (multipart,
 * answering `{text}` with the reply). It records every request.
 */

export interface MockProviderOptions {
  /** Models GET /v1/models lists. Default ['mock-small', 'mock-large']. */
  models?: string[];
  /** When set, requests without `Authorization: Bearer <token>` get OpenAI's 401. */
  token?: string;
  /** The assistant's reply; streamed one word (with its following space) per chunk. */
  reply?: string;
  /** Streamed chunks: delay between events, ms. Default 0. */
  chunkDelayMs?: number;
  /** Write every SSE event in pieces of this many bytes (each its own write), to split lines. */
  splitBytes?: number;
  /** Delay before answering any request (before its status line), ms. Default 0. */
  headerDelayMs?: number;
  /** Answer every request with 307 to this base URL plus the request's path. */
  redirectTo?: string;
  /** Path prefix of the API. Default '/v1'. */
  prefix?: string;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (a multipart body: its text as it came), or undefined for none. */
  body: any;
  /** True once the response finished normally. */
  finished: boolean;
  /** True when the client closed the connection before the response was finished. */
  closedEarly: boolean;
  /** Resolves when the request's connection closed or its response finished. */
  done: Promise<void>;
}

export interface MockProvider {
  /** e.g. http://127.0.0.1:PORT/v1 */
  baseUrl: string;
  port: number;
  requests: RecordedRequest[];
  options: MockProviderOptions;
  close(): Promise<void>;
}

// eslint-disable-next-line no-restricted-syntax -- chunkDelayMs, headerDelayMs and splitBytes make the mock provider slow on purpose
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function openAiError(res: ServerResponse, status: number, message: string, type: string, code: string | null): void {
  sendJson(res, status, { error: { message, type, param: null, code } });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startMockProvider(options: MockProviderOptions = {}): Promise<MockProvider> {
  const prefix = options.prefix ?? '/v1';
  const requests: RecordedRequest[] = [];
  const created = 1_700_000_000;

  async function writeEvent(res: ServerResponse, record: RecordedRequest, text: string): Promise<void> {
    if (record.closedEarly) return;
    const bytes = Buffer.from(text, 'utf8');
    const step = options.splitBytes ?? bytes.length;
    for (let at = 0; at < bytes.length; at += step) {
      res.write(bytes.subarray(at, at + step));
      if (options.splitBytes) await sleep(1);
    }
    if (options.chunkDelayMs) await sleep(options.chunkDelayMs);
  }

  async function chat(res: ServerResponse, record: RecordedRequest): Promise<void> {
    const body = record.body ?? {};
    const model = String(body.model);
    const id = `chatcmpl-mock${requests.length}`;
    const reply = options.reply ?? 'Hello from the mock provider.';
    const usage = { prompt_tokens: 5, completion_tokens: reply.split(' ').length, total_tokens: 5 + reply.split(' ').length };
    if (body.stream !== true) {
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        system_fingerprint: 'fp_mock',
        choices: [{ index: 0, message: { role: 'assistant', content: reply, refusal: null }, logprobs: null, finish_reason: 'stop' }],
        usage,
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): string =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_mock', choices, ...extra })}\n\n`;
    const includeUsage = body.stream_options?.include_usage === true;
    const usageNull = includeUsage ? { usage: null } : {};
    await writeEvent(
      res,
      record,
      chunk([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }], usageNull),
    );
    const words = reply.split(/(?<= )/);
    for (const word of words) {
      await writeEvent(res, record, chunk([{ index: 0, delta: { content: word }, logprobs: null, finish_reason: null }], usageNull));
    }
    await writeEvent(res, record, chunk([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }], usageNull));
    if (includeUsage) await writeEvent(res, record, chunk([], { usage }));
    await writeEvent(res, record, 'data: [DONE]\n\n');
    if (!record.closedEarly) res.end();
  }

  async function responses(res: ServerResponse, record: RecordedRequest): Promise<void> {
    const body = record.body ?? {};
    const reply = options.reply ?? 'Hello from the mock provider.';
    const message = {
      id: 'msg_mock',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: reply, annotations: [] }],
    };
    const response = (status: string, output: unknown[]): Record<string, unknown> => ({
      id: 'resp_mock',
      object: 'response',
      created_at: created,
      status,
      model: String(body.model),
      output,
      usage: status === 'completed' ? { input_tokens: 5, output_tokens: 6, total_tokens: 11 } : null,
    });
    if (body.stream !== true) {
      sendJson(res, 200, { ...response('completed', [message]), output_text: reply });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const event = (type: string, data: Record<string, unknown>): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
    await writeEvent(res, record, event('response.created', { response: response('in_progress', []) }));
    await writeEvent(res, record, event('response.output_text.delta', { item_id: 'msg_mock', output_index: 0, content_index: 0, delta: reply }));
    await writeEvent(res, record, event('response.completed', { response: response('completed', [message]) }));
    if (!record.closedEarly) res.end();
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0]!;
    let resolveDone!: () => void;
    const record: RecordedRequest = {
      method: req.method ?? 'GET',
      path,
      headers: req.headers,
      body: undefined,
      finished: false,
      closedEarly: false,
      done: new Promise<void>((resolve) => (resolveDone = resolve)),
    };
    requests.push(record);
    res.on('finish', () => {
      record.finished = true;
      resolveDone();
    });
    res.on('close', () => {
      if (!record.finished) record.closedEarly = true;
      resolveDone();
    });
    const text = await readBody(req);
    if (text && req.headers['content-type']?.startsWith('multipart/form-data')) record.body = text;
    else if (text) {
      try {
        record.body = JSON.parse(text);
      } catch {
        openAiError(res, 400, 'We could not parse the JSON body of your request.', 'invalid_request_error', null);
        return;
      }
    }
    if (options.token !== undefined && req.headers.authorization !== `Bearer ${options.token}`) {
      const message = req.headers.authorization
        ? 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.'
        : "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).";
      openAiError(res, 401, message, 'invalid_request_error', req.headers.authorization ? 'invalid_api_key' : null);
      return;
    }
    if (options.redirectTo) {
      res.writeHead(307, { location: `${options.redirectTo}${path}` });
      res.end();
      return;
    }
    if (options.headerDelayMs) await sleep(options.headerDelayMs);
    if (record.closedEarly) return;
    const models = options.models ?? ['mock-small', 'mock-large'];
    const route = `${record.method} ${path}`;
    if (route === `GET ${prefix}/models`) {
      sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created, owned_by: 'mock-org' })) });
      return;
    }
    const needsModel = [`POST ${prefix}/chat/completions`, `POST ${prefix}/completions`, `POST ${prefix}/responses`, `POST ${prefix}/embeddings`];
    if (needsModel.includes(route) && !models.includes(String(record.body?.model))) {
      openAiError(
        res,
        404,
        `The model \`${String(record.body?.model)}\` does not exist or you do not have access to it.`,
        'invalid_request_error',
        'model_not_found',
      );
      return;
    }
    if (route === `POST ${prefix}/audio/transcriptions`) {
      sendJson(res, 200, { text: options.reply ?? 'Hello from the mock provider.' });
      return;
    }
    if (route === `POST ${prefix}/chat/completions`) return chat(res, record);
    if (route === `POST ${prefix}/responses`) return responses(res, record);
    if (route === `POST ${prefix}/completions`) {
      const text = options.reply ?? 'Hello from the mock.';
      sendJson(res, 200, {
        id: 'cmpl-mock',
        object: 'text_completion',
        created,
        model: String(record.body.model),
        choices: [{ text, index: 0, logprobs: null, finish_reason: 'stop' }],
        usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
      });
      return;
    }
    if (route === `POST ${prefix}/embeddings`) {
      const inputs: unknown[] = Array.isArray(record.body.input) ? record.body.input : [record.body.input];
      sendJson(res, 200, {
        object: 'list',
        model: String(record.body.model),
        data: inputs.map((_, index) => ({
          object: 'embedding',
          index,
          embedding: record.body.encoding_format === 'base64' ? Buffer.from(new Float32Array([0.1, 0.2, 0.3]).buffer).toString('base64') : [0.1, 0.2, 0.3],
        })),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
      return;
    }
    openAiError(res, 404, `Unknown request URL: ${record.method} ${path}.`, 'invalid_request_error', 'unknown_url');
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) openAiError(res, 500, String(error), 'server_error', null);
      else res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}${prefix}`,
    port,
    requests,
    options,
    close: () => closeServer(server),
  };
}

/** A mock provider for the one test that starts it: closed when that test finishes, however it ends. */
export async function mockProviderForTest(options: MockProviderOptions = {}): Promise<MockProvider> {
  const provider = await startMockProvider(options);
  onTestFinished(() => provider.close());
  return provider;
}

/** A port on 127.0.0.1 with nothing listening (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
