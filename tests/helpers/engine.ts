import type { EngineOptions } from '../../companion/src/inference/engine.js';
import { ServerBuild } from '../../companion/src/inference/server/build-service.js';
import { silentLogger } from '../../companion/src/logger.js';
import { tempFolder } from './temp.js';

/**
 * Engine settings for tests: the CPU, one thread, a 1,024-token context, one sequence, a queue of 8,
 * no idle unload, a 2 GiB budget and a silent log; `extra` overrides any of them.
 */
export function engineOptions(extra: Partial<EngineOptions> = {}): EngineOptions {
  return {
    gpu: 'cpu',
    threads: 1,
    contextSize: 1024,
    parallel: 1,
    queueLimit: 8,
    idleUnloadSeconds: 0,
    memoryBudgetBytes: 2 ** 31,
    log: silentLogger,
    ...extra,
  };
}

/** The same on the llama-server engine, with a run folder of its own. */
export function serverEngineOptions(extra: Partial<EngineOptions> = {}): EngineOptions {
  return engineOptions({ engine: 'server', build: new ServerBuild(), runDir: tempFolder('engine-run'), ...extra });
}
