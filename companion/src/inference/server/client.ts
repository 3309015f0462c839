/**
 * Speaks llama-server's native API over its Unix socket: JSON requests, server-sent event streams,
 * and the Prometheus counters of /metrics. Each request has its own connection (llama-server closes
 * reused ones after a stream), and aborting a request closes its connection, which llama-server
 * notices at the next token: it stops the generation and frees the slot. Bodies are decoded as one
 * UTF-8 stream, so a character split between two reads arrives whole.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { readEvents } from '../../sse-reader.js';

const CLOSED_EARLY = 'the connection to llama-server closed before the answer was complete';

/** The process did not answer, or the connection broke mid-answer: it ended or is ending. */
export class EngineConnectionError extends Error {}

/** llama-server answered with an error status. */
export class EngineHttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** What a connection error says, without the socket's path (it names the data folder). */
function whatBroke(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code) return code;
  return error instanceof Error ? error.message : String(error);
}

export class ServerClient {
  constructor(
    /** The path of the process's Unix socket. */
    private readonly socketPath: () => string,
    private readonly apiKey: string,
  ) {}

  private open(method: string, path: string, body: unknown, signal?: AbortSignal): Promise<IncomingMessage> {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        {
          socketPath: this.socketPath(),
          path,
          method,
          agent: false,
          signal,
          headers: {
            host: 'localhost',
            authorization: `Bearer ${this.apiKey}`,
            ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }),
          },
        },
        resolve,
      );
      request.once('error', (error) =>
        reject(signal?.aborted ? signal.reason : new EngineConnectionError(`llama-server did not answer (${whatBroke(error)})`)),
      );
      request.end(payload);
    });
  }

  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const response = await this.open(method, path, body, signal);
    const text = await readAll(response, signal);
    if ((response.statusCode ?? 500) >= 400) throw new EngineHttpError(response.statusCode ?? 500, messageOf(text));
    return JSON.parse(text) as T;
  }

  async text(path: string, signal?: AbortSignal): Promise<string> {
    const response = await this.open('GET', path, undefined, signal);
    const text = await readAll(response, signal);
    if ((response.statusCode ?? 500) >= 400) throw new EngineHttpError(response.statusCode ?? 500, messageOf(text));
    return text;
  }

  /** POSTs and yields each `data:` event's JSON until the stream ends; an `error` event is thrown. */
  async *events<T>(path: string, body: unknown, signal?: AbortSignal): AsyncGenerator<T> {
    const response = await this.open('POST', path, body, signal);
    if ((response.statusCode ?? 500) >= 400) throw new EngineHttpError(response.statusCode ?? 500, messageOf(await readAll(response, signal)));
    try {
      for await (const event of readEvents(response)) {
        const data = JSON.parse(event.data) as T & { error?: { message?: string; code?: number } };
        if (data.error) throw new EngineHttpError(data.error.code ?? 500, data.error.message ?? 'llama-server reported an error');
        yield data as T;
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      if (error instanceof EngineHttpError) throw error;
      // A stream cut inside an event leaves a piece of JSON behind: that is the connection's fault.
      if (error instanceof SyntaxError && response.complete) throw error;
      if (error instanceof SyntaxError) throw new EngineConnectionError(CLOSED_EARLY);
      throw new EngineConnectionError(`the connection to llama-server broke (${whatBroke(error)})`);
    }
    if (!response.complete && !signal?.aborted) throw new EngineConnectionError(CLOSED_EARLY);
  }

  /** The Prometheus counters of /metrics, by name (`llamacpp:prompt_tokens_total` ...). */
  async metrics(signal?: AbortSignal): Promise<Record<string, number>> {
    const counters: Record<string, number> = {};
    for (const line of (await this.text('/metrics', signal)).split('\n')) {
      const match = /^([a-zA-Z_:][\w:]*)\s+([-+\d.eE]+|NaN)$/.exec(line.trim());
      if (match) counters[match[1]!] = Number(match[2]);
    }
    return counters;
  }
}

function readAll(response: IncomingMessage, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve, reject) => {
    const decoder = new TextDecoder();
    let text = '';
    response.on('data', (piece: Buffer) => (text += decoder.decode(piece, { stream: true })));
    response.once('end', () => resolve(text + decoder.decode()));
    response.once('error', (error) =>
      reject(signal?.aborted ? signal.reason : new EngineConnectionError(`the connection to llama-server broke (${whatBroke(error)})`)),
    );
  });
}

function messageOf(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } };
    return body.error?.message ?? text;
  } catch {
    return text.slice(0, 300);
  }
}
