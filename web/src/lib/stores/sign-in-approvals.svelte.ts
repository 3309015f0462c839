/**
 * Browsers on this machine waiting to be signed in, as a signed-in browser sees them (Server
 * screen): the person types the code the waiting browser shows to let it in, or refuses one.
 * The list never holds the codes: approving needs the code read off the other screen, so a
 * request another local user made is never let in by a click.
 */
import { approveSignIn, refuseSignIn, waitingSignIns } from '$lib/api/session';
import type { WaitingSignIn } from '#shared/api/admin.js';
import { attempt } from './attempt';
import { adminProblem } from './problems';

/** How often the list is asked for while the screen shows it. */
const LIST_EVERY_MS = 3_000;

const describe = (error: unknown) => adminProblem(error, 'let other browsers in');

export class SignInApprovalsStore {
  waiting = $state<WaitingSignIn[]>([]);
  busy = $state(false);
  error = $state<string | null>(null);
  /** The code of the browser let in last, for the confirmation. */
  approved = $state<string | null>(null);

  async refresh(): Promise<void> {
    try {
      this.waiting = (await waitingSignIns()).data;
    } catch {
      // The next look tries again; a refused session shows on the screen's own sign-in notice.
    }
  }

  /** Lets in the browser that shows this code; answers whether it worked. */
  approve(code: string): Promise<boolean> {
    return this.#answer(async () => {
      await approveSignIn(code);
      this.approved = code.toUpperCase().replace(/[^A-Z0-9]/g, '');
    });
  }

  async refuse(id: string): Promise<void> {
    await this.#answer(() => refuseSignIn(id));
  }

  /** Sends an answer to a waiting browser, then reads the list again; answers whether it went through. */
  #answer(send: () => Promise<unknown>): Promise<boolean> {
    this.busy = true;
    this.error = null;
    this.approved = null;
    return attempt(
      async () => {
        await send();
        await this.refresh();
        return true;
      },
      (error) => {
        this.error = describe(error);
        return false;
      },
      () => (this.busy = false),
    );
  }

  /** Asks now and every few seconds; returns the stop function. */
  watch(): () => void {
    void this.refresh();
    const timer = setInterval(() => void this.refresh(), LIST_EVERY_MS);
    return () => clearInterval(timer);
  }
}

export const signInApprovals = new SignInApprovalsStore();
