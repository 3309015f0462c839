import type { EngineBuildStatus } from '#shared/api/admin.js';
import { join } from 'node:path';
import { buildServer, buildWith, clearFailure, readBuildState, serverBuildPaths, type BuildOptions } from '../inference/server/build.js';
import { NATIVE_ENDED, nativeBuildPaths, nativeRecipe } from '../inference/server/native.js';
import { clearSlotFolders } from '../inference/server/slot-store.js';
import { dataPaths } from '../store/data-dir.js';
import type { ClearedConversations } from '#shared/api/admin.js';
import { adminClient } from './admin-client.js';
import { takeDataDir } from './data-dir-option.js';
import { parseCommandArgs, UsageError } from './arguments.js';
import type { CommandContext } from './context.js';

export const usage = `Usage: hearth engine build [--native] [--quiet] [--if-possible]
       hearth engine status
       hearth engine cache clear [--data-dir DIR]

build   compiles llama.cpp's server from the source node-llama-cpp bundles, against its prebuilt
        libraries, into a cache outside the data folder (~/.cache/hearth, or HEARTH_ENGINE_CACHE).
        It needs CMake, a C++ compiler and git, and takes a few minutes on two cores, once per
        node-llama-cpp version. A build already running (started by the companion or the install)
        is waited for. --if-possible exits 0 with a note when this machine cannot build it.
        --native builds the whole llama.cpp tree for this CPU instead (GGML_NATIVE, OpenMP; 1.2-1.4x
        the tokens on a CPU, about 4-8 minutes on two cores), in the foreground; Hearth otherwise
        builds it in the background after the quick build (models.native_build) and moves loaded
        models to it once they are idle.
status  prints the state of both builds.
cache clear
        deletes the conversations saved from llama-server's slots (the data folder's engine/slots/;
        models.slot_cache_mb bounds them). With Hearth running on that data folder, it asks
        Hearth to do it (as Clear on the Server screen does), so a loaded model saves its
        conversations again from then on.

Until the build is ready, models run on the in-process engine (node-llama-cpp inside the companion).`;

/** `hearth engine`: the llama-server build. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  if (argv.includes('cache')) return clearCache(argv, context);
  const { values, positionals } = parseCommandArgs({
    args: argv,
    options: { quiet: { type: 'boolean' }, 'if-possible': { type: 'boolean' }, native: { type: 'boolean' } },
    strict: true,
    allowPositionals: true,
  });
  const [action, ...extra] = positionals;
  if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`);
  const paths = serverBuildPaths(context.env);
  if (action === 'status') {
    context.stdout.write(`${describe(readBuildState(paths, context.env))}\n`);
    if (!('unavailable' in paths))
      context.stdout.write(`Native build: ${describe(readBuildState(nativeBuildPaths(paths, context.env), context.env, () => undefined, NATIVE_ENDED))}\n`);
    return 0;
  }
  if (action !== 'build') throw new UsageError(action ? `unknown action "${action}"` : 'name an action: build or status');
  const say = (line: string) => {
    if (!values.quiet) context.stderr.write(`${line}\n`);
  };
  const before = readBuildState(paths, context.env);
  if ('unavailable' in paths || (before.state === 'absent' && before.reason)) {
    say(`The llama-server engine cannot be built here: ${before.state === 'absent' ? before.reason : 'unknown reason'}.`);
    return values['if-possible'] ? 0 : 1;
  }
  const place = values.native && !('unavailable' in paths) ? nativeBuildPaths(paths, context.env) : paths;
  clearFailure(place);
  let last = '';
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const options: BuildOptions = {
      env: context.env,
      signal: controller.signal,
      onProgress: (status) => {
        const line = describe(status);
        if (line !== last) say(line);
        last = line;
      },
    };
    const result =
      'quick' in place ? await buildWith(place, nativeRecipe(place), { ...options, name: 'the native llama-server build' }) : await buildServer(paths, options);
    say(describe(result));
    return result.state === 'ready' ? 0 : 1;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/**
 * `hearth engine cache clear`: the saved conversation slots of every model go. A running Hearth
 * on the data folder is asked to do it (its loaded models keep their folders); otherwise, or when
 * it does not answer, the folders are deleted here.
 */
async function clearCache(argv: string[], context: CommandContext): Promise<number> {
  const { dataDir, rest } = takeDataDir(argv, context.env);
  if (rest.join(' ') !== 'cache clear') throw new UsageError('the cache action is: hearth engine cache clear');
  const freed = (await clearThroughServer(dataDir)) ?? clearSlotFolders(join(dataPaths(dataDir).root, 'engine'));
  context.stdout.write(`Deleted the saved conversations (${Math.round(freed / 2 ** 20)} MB).\n`);
  return 0;
}

/** The bytes the running Hearth freed, or undefined when none runs on the folder (or it did not answer). */
async function clearThroughServer(dataDir: string): Promise<number | undefined> {
  const client = adminClient(dataDir);
  if ('problem' in client) return undefined;
  try {
    const response = await client.fetch('/admin/engine/conversations', { method: 'DELETE', signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return undefined;
    return ((await response.json()) as ClearedConversations).freed_bytes;
  } catch {
    // A server.json left by a Hearth that is gone: the folders are deleted here.
    return undefined;
  }
}

function describe(status: EngineBuildStatus): string {
  switch (status.state) {
    case 'ready':
      return `llama-server is built (${status.built_at}, in ${status.build_seconds} s).`;
    case 'building':
      return `Building llama-server: ${status.step} (${Math.round(status.progress * 100)} %).`;
    case 'failed':
      return `The llama-server build failed (${status.failed_at}): ${status.reason}`;
    case 'absent':
      return status.reason ? `llama-server is not built, and cannot be built here: ${status.reason}.` : 'llama-server is not built yet.';
  }
}
