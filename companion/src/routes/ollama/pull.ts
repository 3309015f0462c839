import { createHash } from 'node:crypto';
import type { OllamaProgress, OllamaPullRequest } from '#shared/api/ollama.js';
import type { ModelDownload } from '#shared/api/model-library.js';
import { isLoopbackAddress, proxyHeaderOf } from '../../access/hosts.js';
import { HearthError } from '../../errors.js';
import type { OllamaContext } from '../contexts.js';
import type { RoutePlugin } from '../plugin.js';
import type { BodySchema } from '../schema.js';
import { openLines } from './lines.js';
import { pullSource, resolveName } from './names.js';
import { modelOrName } from './schemas.js';

export const ollamaPullBody = {
  type: 'object',
  properties: {
    ...modelOrName,
    insecure: { type: 'boolean' },
    stream: { type: 'boolean' },
  },
} as const satisfies BodySchema<OllamaPullRequest>;

type Used = 'catalog' | 'downloads' | 'shutdown';

/** Ollama's routes that change its own model store: Hearth's models are files, managed on the Models screen. */
const REFUSED: [method: 'POST' | 'DELETE', path: string, what: string][] = [
  ['POST', '/api/create', 'creating a model from a Modelfile'],
  ['POST', '/api/push', 'pushing a model to a registry'],
  ['POST', '/api/copy', 'copying a model under another name'],
  ['DELETE', '/api/delete', 'deleting a model through this API (remove it on the Models screen of the app, or delete its .gguf file)'],
];

/**
 * POST /api/pull: an `hf.co/{owner}/{repo}:{quant}` name is downloaded by Hearth's downloader (the
 * Models screen shows it too), with Ollama's progress lines. Downloading fills this machine's
 * disk, so only this machine's own requests may start one. A name already here answers success.
 */
export const pullRoutes: RoutePlugin<OllamaContext, Used> = async (app, context) => {
  app.post<{ Body: OllamaPullRequest }>('/api/pull', { schema: { body: ollamaPullBody } }, async (request, reply) => {
    const name = request.body.model ?? request.body.name;
    if (!name) throw new HearthError('invalid_request_error', 'model is required: send {"model": "hf.co/{owner}/{repo}:{quant}"}.', { param: 'model' });
    const here = await resolveName(context, name).then(
      () => true,
      () => false,
    );
    if (here) return request.body.stream === false ? { status: 'success' } : lines(reply, [{ status: 'success' }]);
    const source = pullSource(name);
    if (!source)
      throw new HearthError(
        'invalid_request_error',
        `Hearth pulls GGUF models from Hugging Face, not from Ollama's library: name one as hf.co/{owner}/{repo}:{quant}, such as hf.co/bartowski/Qwen2.5-7B-Instruct-GGUF:Q4_K_M. "${name}" is not such a name.`,
        { param: 'model' },
      );
    if (!isLoopbackAddress(request.socket.remoteAddress) || proxyHeaderOf(request.headers))
      throw new HearthError(
        'permission_denied',
        'Models are downloaded only at the request of the machine Hearth runs on: pull from there, or on the Models screen.',
      );
    const download = context.downloads.create(source);
    const digest = `sha256:${createHash('sha256').update(source).digest('hex')}`;
    if (request.body.stream === false) {
      const last = await ending(context, download);
      if (last.status !== 'completed') throw failure(name, last);
      return { status: 'success' };
    }
    const out = openLines(reply);
    out.line({ status: 'pulling manifest' });
    const last = await ending(context, download, (update) => {
      if (update.status === 'downloading')
        out.line({ status: `pulling ${digest.slice(7, 19)}`, digest, total: update.bytes_total ?? 0, completed: update.bytes_done });
    });
    if (last.status === 'completed') for (const status of ['verifying sha256 digest', 'writing manifest', 'success']) out.line({ status });
    else out.line({ error: failure(name, last).message });
    out.end();
    return undefined;
  });

  for (const [method, path, what] of REFUSED)
    app.route({
      method,
      url: path,
      handler: async () => {
        throw new HearthError('invalid_request_error', `Hearth does not support ${what}: ${path} is Ollama's own model store, which Hearth does not have.`);
      },
    });
};

/** The download once it stops (completed, failed, cancelled or paused), telling `progress` of each change before. */
function ending(
  context: Pick<OllamaContext, 'downloads' | 'shutdown'>,
  first: ModelDownload,
  progress?: (download: ModelDownload) => void,
): Promise<ModelDownload> {
  const stopped = (download: ModelDownload) => download.status !== 'queued' && download.status !== 'downloading';
  return new Promise((resolve) => {
    const finish = (download: ModelDownload) => {
      stop();
      context.shutdown.removeEventListener('abort', onShutdown);
      resolve(download);
    };
    const stop = context.downloads.subscribe((download) => {
      if (download.id !== first.id) return;
      progress?.(download);
      if (stopped(download)) finish(download);
    });
    const onShutdown = () => finish(context.downloads.get(first.id));
    context.shutdown.addEventListener('abort', onShutdown, { once: true });
    const now = context.downloads.get(first.id);
    if (stopped(now)) finish(now);
  });
}

function failure(name: string, download: ModelDownload): HearthError {
  const why = download.status === 'failed' ? (download.error ?? 'it failed') : `it was ${download.status}`;
  return new HearthError('provider_error', `The download of ${name} did not complete: ${why}.`);
}

function lines(reply: Parameters<typeof openLines>[0], payloads: OllamaProgress[]): undefined {
  const out = openLines(reply);
  for (const payload of payloads) out.line(payload);
  out.end();
  return undefined;
}
