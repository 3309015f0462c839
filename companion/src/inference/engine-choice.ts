/**
 * Which engine runs a chat model, and why, in words for the status page: llama.cpp's own server
 * (a supervised child process per model) whenever its build is ready and works, else node-llama-cpp
 * inside the companion. `models.engine` (or HEARTH_ENGINE) can pin either; pinned to the server,
 * a model that cannot run there is refused with the reason instead of falling back.
 */
import type { EngineBuildStatus, EngineKind, EngineSetting } from '#shared/api/admin.js';
import { HearthError } from '../errors.js';

export const ENGINE_SETTINGS: readonly EngineSetting[] = ['auto', 'server', 'in-process'];

export type EngineChoice = { engine: EngineKind; reason: string } | { refused: HearthError };

/** The choice before the model is opened: the setting and the build's state. */
export function chooseEngine(setting: EngineSetting, build: EngineBuildStatus, id: string): EngineChoice {
  if (setting === 'in-process') return { engine: 'in-process', reason: 'The engine setting asks for the in-process engine.' };
  if (build.state === 'ready') {
    return {
      engine: 'server',
      reason: setting === 'server' ? 'The engine setting asks for the llama-server engine.' : 'llama-server is built and runs each model in its own process.',
    };
  }
  const why = buildWords(build);
  if (setting === 'server') {
    return build.state === 'building' || (build.state === 'absent' && !build.reason)
      ? {
          refused: new HearthError('server_busy', `${id} waits for the llama-server engine: ${why}. Retry in a minute, or set the engine to auto.`, {
            retryAfter: 30,
          }),
        }
      : { refused: new HearthError('model_load_failed', `${id} cannot run on the llama-server engine: ${why}.`, { param: 'model' }) };
  }
  return { engine: 'in-process', reason: `${why}; the in-process engine runs models meanwhile.` };
}

/** The build's state as the reason for not using it. */
export function buildWords(build: EngineBuildStatus): string {
  switch (build.state) {
    case 'building':
      return `llama-server is being built (${Math.round(build.progress * 100)} %, ${build.step})`;
    case 'failed':
      return build.reason;
    case 'absent':
      return build.reason ? `llama-server cannot be built here: ${build.reason}` : 'llama-server is not built yet (its build starts in the background)';
    case 'ready':
      return 'llama-server is built';
  }
}

/** The in-process engine runs a model the server engine could not. */
export function fallbackReason(problem: string): string {
  return `llama-server cannot run this model: ${problem}. The in-process engine runs it instead.`;
}
