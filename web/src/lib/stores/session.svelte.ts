/**
 * Whether this browser is signed in to the companion's admin routes, and how the person at the
 * companion's machine signs in. The session is an HttpOnly cookie the page cannot read plus a
 * proof the page keeps in its own origin's storage (`$lib/storage/admin-proof`) and sends with
 * every admin request; the companion says whether the two make a session (`GET /admin/session`, which never answers 401), and the
 * page keeps a note of it so screens that need the admin routes (downloads, live activity, the
 * tool catalog, devices) ask only while it is set: a signed-out browser sends nothing that
 * would be refused. The note also tells other tabs of a sign-in or a sign-out.
 */
import { endEverySession, endSession, redeemSignIn, sessionState } from '$lib/api/session';
import { forgetAdminProof, readAdminProof, storeAdminProof } from '$lib/storage/admin-proof';
import type { SessionState } from '#shared/api/admin.js';
import { listen } from './listen';

const KEY = 'hearth.admin-signed-in';
/** How commands are spelled on the companion's machine, kept for when the companion cannot be asked. */
const HOW_KEY = 'hearth.commands';

type Commands = Omit<SessionState, 'signed_in'>;

function readNote(): boolean {
  try {
    return globalThis.localStorage?.getItem(KEY) === '1';
  } catch {
    return false;
  }
}

function readCommands(): Commands | null {
  try {
    const text = globalThis.localStorage?.getItem(HOW_KEY);
    return text ? (JSON.parse(text) as Commands) : null;
  } catch {
    return null;
  }
}

function write(key: string, value: string | null): void {
  try {
    if (value === null) globalThis.localStorage?.removeItem(key);
    else globalThis.localStorage?.setItem(key, value);
  } catch {
    // Storage may be off (private mode): the note is a convenience.
  }
}

/** Admin routes answer only on the companion's machine (loopback). */
function onCompanionMachine(): boolean {
  if (typeof location === 'undefined') return true;
  return ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(location.hostname) || location.hostname.endsWith('.localhost');
}

/** How to start Hearth when it was never reached from this browser. */
const START_UNKNOWN = 'run npm start in the Hearth folder (or hearth, where it is installed as a command)';

export class SessionStore {
  /** The page's note: signed in as far as it knows (confirmed by `check`). */
  signedIn = $state(readNote());
  /** The companion answered whether this browser is signed in. */
  checked = $state(false);
  /** How commands are spelled on the companion's machine (remembered from its last answer). */
  commands = $state<Commands | null>(readCommands());
  /** False off the companion's machine, where admin screens are never available. */
  readonly local = onCompanionMachine();
  busy = $state(false);
  error = $state<string | null>(null);

  /** The command that prints a sign-in link, as it runs on the companion's machine. */
  get signInCommand(): string {
    return this.commands?.sign_in_command ?? 'npm run hearth -- open';
  }

  /** " in the Hearth folder (…)" when the command must run there; "" when it runs anywhere. */
  get where(): string {
    if (!this.commands) return ' in the Hearth folder';
    if (this.commands.folder) return ` in the Hearth folder (${this.commands.folder})`;
    return this.commands.in_folder ? ' in the Hearth folder' : '';
  }

  /** How to start the companion, as it was started here before. */
  get startAdvice(): string {
    if (!this.commands) return START_UNKNOWN;
    if (this.commands.folder) return `run ${this.commands.start_command} in the Hearth folder (${this.commands.folder})`;
    return this.commands.in_folder ? `run ${this.commands.start_command} in the Hearth folder` : `run ${this.commands.start_command}`;
  }

  /** One sentence: how this browser gets signed in. */
  get howToSignIn(): string {
    if (!this.local) return 'The companion is managed only on the machine it runs on: open Hearth there.';
    return `To sign in, run ${this.signInCommand}${this.where} on the machine Hearth runs on, and open the link it prints in this browser. Restarting Hearth also opens a signed-in window.`;
  }

  /** Asks the companion whether this browser is signed in (nothing is asked off its machine). */
  async check(signal?: AbortSignal): Promise<void> {
    if (!this.local) {
      this.#note(false);
      return;
    }
    try {
      const sent = readAdminProof();
      const state = await sessionState(signal);
      // A sign-in or sign-out while it was asked makes the answer stale (it speaks of the proof sent, not the one kept now).
      if (readAdminProof() !== sent) return;
      const { signed_in, ...commands } = state;
      // Signed out, the companion leaves its folders out: keep the ones it gave while signed in.
      const known = this.commands;
      this.commands = signed_in || !known ? commands : { ...known, ...commands };
      write(HOW_KEY, JSON.stringify(this.commands));
      // The companion knows no session for the proof kept here (ended, expired, another data folder).
      if (!signed_in) forgetAdminProof();
      this.#note(signed_in);
      this.checked = true;
    } catch {
      // Unreachable: the note stands until the companion can say.
    }
  }

  /** Redeems the one-time code of a sign-in link. */
  async signIn(code: string, signal?: AbortSignal): Promise<void> {
    const { proof } = await redeemSignIn(code, signal);
    this.keep(proof);
  }

  /** Keeps the proof of a session the companion just started for this browser (a link redeemed, or a request approved). */
  keep(proof: string): void {
    try {
      storeAdminProof(proof);
    } catch {
      throw new Error(
        'This browser does not let Hearth keep what it needs to stay signed in (site data is turned off or full). Allow site data for this address, then sign in again.',
      );
    }
    this.markSignedIn();
  }

  /** Signs this browser out: the companion ends its session for good. */
  async signOut(): Promise<void> {
    await this.#end(endSession, 'Signing out failed');
  }

  /** Signs every browser out, this one included (for a browser left signed in somewhere else). */
  async signOutEverywhere(): Promise<void> {
    await this.#end(endEverySession, 'Signing out everywhere failed');
  }

  async #end(action: () => Promise<unknown>, failure: string): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      await action();
      forgetAdminProof();
      this.markSignedOut();
    } catch (error) {
      this.error = `${failure}: ${error instanceof Error ? error.message : String(error)}`;
    } finally {
      this.busy = false;
    }
  }

  /** A sign-in link was redeemed. */
  markSignedIn(): void {
    this.checked = true;
    this.#note(true);
  }

  /** Signed out here, or the companion refused the session (expired, another data folder). */
  markSignedOut(): void {
    this.#note(false);
  }

  #note(signedIn: boolean): void {
    this.signedIn = signedIn;
    write(KEY, signedIn ? '1' : null);
  }

  /** Asks now and when the page comes back into view; follows sign-ins and sign-outs in other tabs. Returns the stop function. */
  watch(): () => void {
    void this.check();
    const changed = (event: StorageEvent) => {
      if (event.key === KEY || event.key === null) this.signedIn = readNote();
    };
    const visible = () => {
      if (document.visibilityState === 'visible') void this.check();
    };
    return listen([window, 'storage', changed], [document, 'visibilitychange', visible]);
  }
}

export const session = new SessionStore();
