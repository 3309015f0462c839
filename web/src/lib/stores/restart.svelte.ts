/**
 * Restarting the companion from the app ("Restart now", wherever a saved change waits for a
 * restart): asks for it, shows "Restarting…" while the companion is away, and once one started
 * after the request answers, counts a finished restart, so that the screens read their settings
 * again and show the change in force.
 */
import { companionStartedAt, restartCompanion } from '$lib/api/restart';
import { adminProblem } from './problems';
import { server } from './server.svelte';
import { session } from './session.svelte';

/** How long the app waits for the companion to come back before it says so. */
const PATIENCE_MS = 120_000;
/** How often it asks meanwhile. */
const EVERY_MS = 500;

/** A URL's port (written, or its scheme's). */
const portOf = (url: string): string => /^[a-z]+:\/\/[^/]*?:(\d+)(?:\/|$)/i.exec(url)?.[1] ?? (url.startsWith('https:') ? '443' : '80');

export class RestartStore {
  /** idle, restarting (asked, waiting for it to come back), moved (it came back at another address) or failed. */
  state = $state<'idle' | 'restarting' | 'moved' | 'failed'>('idle');
  /** Why the last restart did not finish, in words. */
  problem = $state<string | null>(null);
  /** Where it answers now, when its port changed. */
  url = $state<string | null>(null);
  /** Finished restarts since the page was opened: screens that show a waiting change read their settings again when it grows. */
  finished = $state(0);

  async restart(): Promise<void> {
    if (this.state === 'restarting') return;
    this.state = 'restarting';
    this.problem = null;
    let answer;
    try {
      answer = await restartCompanion();
    } catch (error) {
      this.state = 'failed';
      this.problem = adminProblem(error, 'restart Hearth');
      return;
    }
    // Only the port can change (the configured one); the page may name the machine otherwise (localhost).
    if (typeof location !== 'undefined' && portOf(answer.url) !== portOf(location.origin)) {
      this.state = 'moved';
      this.url = `${location.protocol}//${location.hostname}:${portOf(answer.url)}`;
      return;
    }
    const until = Date.now() + PATIENCE_MS;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, EVERY_MS));
      const started = await companionStartedAt(AbortSignal.timeout(5000));
      if (started && started !== answer.started_at) {
        this.state = 'idle';
        this.finished++;
        await server.check();
        return;
      }
    }
    this.state = 'failed';
    this.problem = `Hearth has not come back yet. Look at the terminal it runs in for the reason; to start it again, ${session.startAdvice}.`;
  }
}

export const restart = new RestartStore();
