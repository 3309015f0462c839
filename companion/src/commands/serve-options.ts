import { delimiter, resolve } from 'node:path';
import type { EngineSetting } from '#shared/api/admin.js';
import { ENGINE_SETTINGS } from '../inference/engine-choice.js';
import { defaultDataDirectory } from '../store/data-dir.js';
import { parseCommandArgs, UsageError } from './arguments.js';

export interface ServeOptions {
  host?: string;
  port?: number;
  dataDir: string;
  modelsDirs?: string[];
  externalSources?: boolean;
  /** Print the sign-in link instead of opening the browser on it. */
  noBrowser: boolean;
  engine?: EngineSetting;
}

export const SERVE_USAGE = `Usage: hearth serve [--host 127.0.0.1] [--port 4777] [--data-dir DIR] [--models-dir DIR ...] [--no-external-models] [--no-browser]

Starts the companion: the app and the API on http://HOST:PORT (the default command). Started
from a terminal on a machine with a display, it opens the app in the default browser, signed
in; with --no-browser (or without a display, under CI, or with no terminal) it prints a
one-time sign-in link instead.

Environment: HEARTH_HOST, HEARTH_PORT, HEARTH_DATA_DIR, HEARTH_MODELS_DIR (a path list),
HEARTH_EXTERNAL_MODELS=0 (do not list LM Studio, Ollama, Hugging Face or llama.cpp models),
HEARTH_BROWSER (the command that opens the sign-in page, given its file; none: never open one),
HEARTH_ENGINE=auto|server|in-process (which engine runs chat models; models.engine in config.yaml),
HEARTH_ENGINE_CACHE (where the llama-server build is kept; default ~/.cache/hearth),
HEARTH_LOG_LEVEL (info; debug shows every request), HEARTH_LOG_FORMAT=json (JSON lines even on a terminal).
Flags win over the environment, which wins over config.yaml.`;

/** Flags first, then HEARTH_* variables; whatever neither sets comes from config.yaml. */
export function parseServeOptions(argv: string[], env: NodeJS.ProcessEnv): ServeOptions {
  const { values } = parseCommandArgs({
    args: argv,
    options: {
      host: { type: 'string' },
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      'models-dir': { type: 'string', multiple: true },
      'no-external-models': { type: 'boolean' },
      'no-browser': { type: 'boolean' },
    },
    strict: true,
    allowPositionals: false,
  });
  const portText = values.port ?? env.HEARTH_PORT;
  let port: number | undefined;
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d+$/.test(portText) || port > 65535) {
      const from = values.port === undefined ? 'HEARTH_PORT' : '--port';
      throw new UsageError(
        `${from} must be a number from 0 to 65535, not "${portText}".`,
        `Start with a port in that range (4777 unless config.yaml says otherwise), or 0 for any free one: hearth serve --port 0`,
      );
    }
  }
  const modelsDirs = values['models-dir'] ?? env.HEARTH_MODELS_DIR?.split(delimiter).filter(Boolean);
  const external = values['no-external-models']
    ? false
    : env.HEARTH_EXTERNAL_MODELS !== undefined
      ? !/^(0|false|no|off)$/i.test(env.HEARTH_EXTERNAL_MODELS)
      : undefined;
  const engine = env.HEARTH_ENGINE || undefined;
  if (engine !== undefined && !ENGINE_SETTINGS.includes(engine as EngineSetting))
    throw new UsageError(
      `HEARTH_ENGINE must be one of ${ENGINE_SETTINGS.join(', ')}, not "${engine}".`,
      'Set it to one of those, or leave it unset to use models.engine in config.yaml.',
    );
  return {
    host: values.host ?? env.HEARTH_HOST,
    port,
    dataDir: resolve(values['data-dir'] ?? env.HEARTH_DATA_DIR ?? defaultDataDirectory()),
    modelsDirs: modelsDirs?.map((dir) => resolve(dir)),
    externalSources: external,
    noBrowser: values['no-browser'] === true,
    engine: engine as EngineSetting | undefined,
  };
}
