import type { FastifyInstance } from 'fastify';
import { HearthError } from '../errors.js';
import type { DataFolderWatch } from '../store/folder-watch.js';

/** Methods that change nothing. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Signing the app in (and out) stays possible: the app is where a person sees what happened
 * (sessions outlive nothing either way, since the folder they would be saved in is gone). So does
 * restarting from the app: that is one of the two ways out.
 */
const ALLOWED = /^\/admin\/(sessions?(\/|$)|restart$)/;

/**
 * While the data folder is gone (deleted or moved while Hearth runs), every request that would
 * change something is refused with `data_folder_gone` (503): nothing it saved would be kept.
 * Installed after the perimeter, so a caller it refuses hears that first; the error comes in the
 * shape of the route's family (OpenAI's, Anthropic's, Ollama's).
 */
export function installDataFolderGuard(app: FastifyInstance, dataFolder: Pick<DataFolderWatch, 'gone'>): void {
  app.addHook('onRequest', async (request) => {
    if (!dataFolder.gone || READS.has(request.method)) return;
    if (ALLOWED.test(request.routeOptions.url ?? request.url.split('?')[0]!)) return;
    throw new HearthError('data_folder_gone');
  });
}
