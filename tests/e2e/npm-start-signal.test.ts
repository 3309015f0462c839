import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanEnv, REPO_ROOT, untilListening, type Watched } from '../helpers/hearth-process.js';
import { newDataDir } from '../helpers/server.js';
import { openStream } from '../helpers/streams.js';

/*
 * Ctrl+C on `npm start`, the way a terminal sends it: SIGINT to every process of the foreground
 * process group (npm, the start script, Hearth), while npm also passes the signal on to its
 * child. Before, the script forwarded a second SIGINT that Hearth (which handled only the first)
 * died of: a stream cut with no last event, server.json left behind, models not unloaded, and
 * npm exiting 130, in 3 of 6 tries. Each try here must shut down gracefully.
 */

const TRIES = 4;
const groups: number[] = [];

afterEach(() => {
  for (const group of groups.splice(0)) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/** `npm start -- ...` as the leader of a process group of its own, as a terminal starts it. */
async function npmStart(dataDir: string): Promise<Watched & { group: number }> {
  const child = spawn('npm', ['start', '--', '--port', '0', '--data-dir', dataDir, '--no-external-models'], {
    cwd: REPO_ROOT,
    env: cleanEnv({ HEARTH_LOG_LEVEL: 'info', HEARTH_LOG_FORMAT: 'json' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  groups.push(child.pid!);
  return { ...(await untilListening(child, 'npm start')), group: child.pid! };
}

describe('Ctrl+C on npm start', () => {
  it(`shuts down gracefully every time (${TRIES} tries): a last stream event, exit 0, no server.json, models unloaded`, async () => {
    const dataDir = await newDataDir(true);
    const outcomes: string[] = [];
    for (let attempt = 0; attempt < TRIES; attempt++) {
      const started = await npmStart(dataDir);
      // A streamed reply that never ends by itself, once its first words came.
      const stream = await openStream(
        `${started.url}/v1/chat/completions`,
        { model: 'tiny', stream: true, max_tokens: 1_000_000, messages: [{ role: 'user', content: 'Go on.' }] },
        (text) => text.split('"content":"').length >= 4,
      );
      process.kill(-started.group, 'SIGINT');
      const [text, exit] = await Promise.all([stream.rest().catch((error: Error) => `cut: ${error.message}`), started.exited]);
      const last = text.trim().split('\n\n').at(-1) ?? '';
      const ended = /"code":"server_busy"/.test(last) ? 'last event: shutting down' : `last event: ${last.slice(0, 120)}`;
      const unloaded = /"msg":"model unloaded"/.test(started.stderr()) ? 'model unloaded' : 'model not unloaded';
      const serverFile = existsSync(join(dataDir, 'server.json')) ? 'server.json left' : 'no server.json';
      outcomes.push(`exit ${exit.code ?? exit.signal}, ${ended}, ${serverFile}, ${unloaded}`);
      groups.splice(groups.indexOf(started.group), 1);
    }
    expect(outcomes).toEqual(Array.from({ length: TRIES }, () => 'exit 0, last event: shutting down, no server.json, model unloaded'));
  }, 300_000);
});
