/**
 * The companion's view of the native llama-server build: once the quick build is ready, it is
 * started in the background as its own detached process (`hearth engine build --native --quiet`,
 * at idle priority), never while another build runs; its state comes from the files the build
 * writes, and the models on the quick build are told when it is ready. A failed native build
 * stays failed (the quick build runs on) until a new llama.cpp version or `retry()`.
 */
import type { EngineBuildStatus, EngineSetting, NativeBuildSetting, NativeBuildStatus } from '#shared/api/admin.js';
import type { Logger } from '../../logger.js';
import { clearFailure, readBuildState } from './build.js';
import { canStartHearth, startHearth, type ServerBuild } from './build-service.js';
import { NATIVE_ENDED, nativeBuildPaths, type NativeBuildPaths } from './native.js';

/** How often the build's files are read while it waits for the quick build or runs. */
const WATCH_MS = 3000;

/** What the engine uses of the native build: its binary once ready, hearing it become ready, its state, and Try again. */
export type NativeBinary = Pick<NativeBuild, 'binary' | 'onReady' | 'status' | 'retry'>;

export class NativeBuild {
  private resolved?: NativeBuildPaths | { unavailable: string };
  private started = false;
  private watch?: NodeJS.Timeout;
  private readyHeard = false;
  private readonly listeners = new Set<(binary: string) => void>();

  private inProcessOnly = false;

  constructor(
    private readonly quick: ServerBuild,
    private setting: NativeBuildSetting = 'auto',
    private readonly env: NodeJS.ProcessEnv = process.env,
    private readonly log?: Logger,
  ) {}

  get paths(): NativeBuildPaths | { unavailable: string } {
    if (!this.resolved) {
      const quick = this.quick.paths;
      this.resolved = 'unavailable' in quick ? quick : nativeBuildPaths(quick, this.env);
    }
    return this.resolved;
  }

  /** Why the native build is not made now, or undefined when it may be. */
  private offReason(): string | undefined {
    if (this.setting === 'off') return 'models.native_build is off';
    if (this.inProcessOnly) return 'models run on the in-process engine only (models.engine)';
    // The test suite never spends CPU on it unless a test names the build command.
    if (this.env.NODE_ENV === 'test' && !this.env.HEARTH_NATIVE_BUILD_COMMAND) return 'it is not built while the tests run';
    return undefined;
  }

  status(): NativeBuildStatus {
    return { setting: this.setting, build: this.build() };
  }

  private build(): EngineBuildStatus {
    const off = this.offReason();
    if (off) return { state: 'absent', reason: off };
    const state = readBuildState(this.paths, this.env, () => undefined, NATIVE_ENDED);
    if (state.state === 'absent' && !state.reason && this.quick.status().state !== 'ready')
      return { state: 'absent', reason: 'it is built once the quick build is ready' };
    return state;
  }

  /** The native binary when it is built and in use (the setting is auto). */
  binary(): string | undefined {
    const paths = this.paths;
    return 'unavailable' in paths || this.build().state !== 'ready' ? undefined : paths.binary;
  }

  /** Hears the native build become ready (at once when it is). */
  onReady(listener: (binary: string) => void): void {
    this.listeners.add(listener);
  }

  /** New settings: off (or the in-process engine only) stops starting the build; auto starts it when it can. */
  configure(setting: NativeBuildSetting, engine: EngineSetting): void {
    this.setting = setting;
    this.inProcessOnly = engine === 'in-process';
    this.start();
  }

  /** Forgets a failed build and starts it again (Try again on the Server screen). */
  retry(): NativeBuildStatus {
    const paths = this.paths;
    if (!('unavailable' in paths)) clearFailure(paths);
    this.started = false;
    this.readyHeard = false;
    this.start();
    return this.status();
  }

  /**
   * Starts the build in the background when it may run: on (and not in tests), the quick build
   * ready, no native build made, running or failed. Until it is ready the build's files are read
   * every few seconds; a quick build still running is waited for.
   */
  start(): void {
    const paths = this.paths;
    if (this.offReason() || 'unavailable' in paths) return this.stopWatching();
    const state = this.build();
    if (state.state === 'ready') {
      this.stopWatching();
      if (!this.readyHeard) {
        this.readyHeard = true;
        for (const listener of this.listeners) listener(paths.binary);
      }
      return;
    }
    if (state.state === 'failed') return this.stopWatching();
    if (state.state === 'absent' && !state.reason && !this.started && canStartHearth()) {
      this.started = true;
      startHearth(['engine', 'build', '--native', '--quiet'], this.env, this.log, {
        started: 'building llama-server natively for this CPU in the background (the quick build runs models meanwhile)',
        failed: 'the native llama-server build could not be started',
      });
    }
    this.watch ??= setInterval(() => this.start(), WATCH_MS);
    this.watch.unref();
  }

  private stopWatching(): void {
    clearInterval(this.watch);
    this.watch = undefined;
  }

  close(): void {
    this.stopWatching();
  }
}
