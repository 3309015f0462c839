/**
 * This browser asks a browser on the same machine that is already signed in to let it in: it
 * shows a short code, the person types that code on the other browser's Server screen, and this
 * browser asks every moment whether it was approved. The secret that picks up the session is kept
 * only here, in memory: another tab, another browser or another local user cannot use it.
 */
import { askToSignIn, signInAnswer } from '$lib/api/session';
import { session } from './session.svelte';

/** How often the answer is asked for while waiting. */
const ASK_EVERY_MS = 1_500;

export type AskPhase = 'idle' | 'asking' | 'waiting' | 'refused' | 'expired' | 'failed';

/** "K7QM2P" as "K7Q M2P": easier to read out and to compare. */
export const spacedCode = (code: string): string => `${code.slice(0, 3)} ${code.slice(3)}`;

export class SignInRequestStore {
  phase = $state<AskPhase>('idle');
  /** The code to show while waiting. */
  code = $state<string | null>(null);
  /** When the request ends if nobody approves it. */
  expiresAt = $state<number | null>(null);
  error = $state<string | null>(null);
  #secret: string | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;

  /** Starts a request (or keeps the one that waits). */
  async ask(): Promise<void> {
    if (this.phase === 'waiting' || this.phase === 'asking') return;
    this.phase = 'asking';
    this.error = null;
    try {
      const asked = await askToSignIn(AbortSignal.timeout(10_000));
      this.#secret = asked.secret;
      this.code = asked.code;
      this.expiresAt = Date.parse(asked.expires_at);
      this.phase = 'waiting';
      this.#later();
    } catch (error) {
      this.#fail(error);
    }
  }

  /** Stops waiting; the companion lets the request expire. */
  cancel(): void {
    this.#stop();
    this.phase = 'idle';
    this.code = null;
    this.error = null;
  }

  #later(): void {
    this.#timer = setTimeout(() => void this.#look(), ASK_EVERY_MS);
  }

  async #look(): Promise<void> {
    this.#timer = null;
    const secret = this.#secret;
    if (!secret || this.phase !== 'waiting') return;
    try {
      const answer = await signInAnswer(secret, AbortSignal.timeout(10_000));
      if (this.#secret !== secret) return;
      if (answer.state === 'waiting') {
        this.#later();
        return;
      }
      this.#secret = null;
      if (answer.state === 'approved' && answer.proof) {
        session.keep(answer.proof);
        this.phase = 'idle';
        this.code = null;
        return;
      }
      this.phase = answer.state === 'refused' ? 'refused' : 'expired';
    } catch (error) {
      if (this.#secret === secret) this.#fail(error);
    }
  }

  #fail(error: unknown): void {
    this.#stop();
    this.phase = 'failed';
    this.error = error instanceof Error ? error.message : String(error);
  }

  #stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#secret = null;
  }
}

export const signInRequest = new SignInRequestStore();
