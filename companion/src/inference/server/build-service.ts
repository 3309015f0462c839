/**
 * The companion's view of the llama-server build: its state for the status page and the engine's
 * choice, and the background build started after the first start when there is none. The build
 * runs as its own detached process (`hearth engine build --quiet`), so it is not cut short when
 * the companion stops and is shared with any other companion on this machine.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { EngineBuildStatus } from '#shared/api/admin.js';
import { installFolder } from '../../invocation.js';
import type { Logger } from '../../logger.js';
import { readBuildState, serverBuildPaths, type ServerBuildPaths } from './build.js';
import { missingToolchainAsync } from './toolchain.js';

/** How long the answer to "are CMake, a compiler and git installed?" is kept (finding out runs them). */
const TOOLS_CHECKED_FOR_MS = 60_000;

// Found from the install folder, so it is right from the sources and from the compiled build/companion alike.
const HEARTH = join(installFolder(), 'bin', 'hearth.js');

export class ServerBuild {
  private resolved?: ServerBuildPaths | { unavailable: string };
  private started = false;
  private tools?: { missing: string | undefined; at: number };
  private checking?: Promise<void>;

  constructor(
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly log?: Logger,
  ) {}

  get paths(): ServerBuildPaths | { unavailable: string } {
    this.resolved ??= serverBuildPaths(this.env);
    return this.resolved;
  }

  /** The state; what keeps an absent build from being made is the last answer of checkTools(). */
  status(): EngineBuildStatus {
    void this.checkTools();
    return readBuildState(this.paths, this.env, () => this.tools?.missing);
  }

  /** Finds out (again, after a minute) whether CMake, a compiler and git are installed, without blocking. */
  checkTools(): Promise<void> {
    if (this.tools && Date.now() - this.tools.at < TOOLS_CHECKED_FOR_MS) return Promise.resolve();
    this.checking ??= missingToolchainAsync(this.env)
      .then((missing) => void (this.tools = { missing, at: Date.now() }))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  /** The built binary and its paths, when the build is ready. */
  ready(): ServerBuildPaths | undefined {
    const paths = this.paths;
    return 'unavailable' in paths || this.status().state !== 'ready' ? undefined : paths;
  }

  /** Starts the build in the background when there is none and this machine can build it; returns the state. */
  startInBackground(): EngineBuildStatus {
    const status = this.status();
    if (this.started || status.state !== 'absent' || status.reason || !canStartHearth()) return status;
    if (!this.tools) {
      // The tools are being looked for: start once they are known to be there.
      void this.checkTools().then(() => this.startInBackground());
      return status;
    }
    this.started = true;
    startHearth(['engine', 'build', '--quiet'], this.env, this.log, {
      started: 'building the llama-server engine in the background (the in-process engine runs models meanwhile)',
      failed: 'the llama-server build could not be started',
    });
    return this.status();
  }
}

/** Whether this install has its `hearth` command to start (bin/hearth.js). */
export function canStartHearth(): boolean {
  return existsSync(HEARTH);
}

/** Starts `hearth <args>` as a detached process that goes on after the companion stops, logging that it started (or why not). */
export function startHearth(args: string[], env: NodeJS.ProcessEnv, log: Logger | undefined, words: { started: string; failed: string }): void {
  const child = spawn(process.execPath, [HEARTH, ...args], { detached: true, stdio: 'ignore', env });
  child.once('error', (error) => log?.warn({ err: error }, words.failed));
  child.unref();
  log?.info({ pid: child.pid }, words.started);
}
