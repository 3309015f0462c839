/**
 * Who may connect to the companion (Server screen): network exposure, required access keys and
 * other web pages allowed to call it. Saved as the configuration's other changes are: the plan
 * first, its high-risk parts shown in words and confirmed, then apply; the companion's own rules
 * (no exposure without required keys and a key to use) decide, and its refusals are shown in words.
 */
import { ApiError } from '$lib/api/client';
import { applyChange, planChange, readConfig, type ConfigChange } from '$lib/api/settings';
import {
  accessChange,
  accessDiffers,
  accessFormFrom,
  normaliseOrigin,
  originProblem,
  problemText,
  restartText,
  riskText,
  type AccessForm,
} from '$lib/settings/server-access';
import type { ApplyResult, ConfigProblem } from '#shared/api/admin-config.js';
import type { ServerSettings } from '#shared/api/config.js';
import { accessKeys } from './access-keys.svelte';
import { server } from './server.svelte';
import { adminProblem } from './problems';

const describe = (error: unknown) => adminProblem(error, 'change who may connect');

export class ServerAccessStore {
  /** The settings in force (as config.yaml has them). */
  current = $state<ServerSettings | null>(null);
  form = $state<AccessForm | null>(null);
  /** The web page address being typed, and why it cannot be added. */
  newOrigin = $state('');
  originError = $state<string | null>(null);
  saving = $state(false);
  /** The companion's refusals of the last change, in words (and a command to run, where one solves it). */
  problems = $state<{ text: string; command?: string }[]>([]);
  /** The high-risk parts of the change, in words, while it waits for confirmation. */
  risks = $state<string[] | null>(null);
  error = $state<string | null>(null);
  notice = $state<string | null>(null);
  /** The saved change waits for Hearth to start again (the notice says so, beside Restart now). */
  restartWaiting = $state(false);
  /**
   * Turning "Require an access key" on, waiting for the person's choice: whether any key exists
   * (none: the companion refuses it, and the only way on is to create one first), and whether this
   * browser has one saved (none: the app's own chat would be refused).
   */
  enabling = $state<{ anyKey: boolean; browserKey: boolean } | null>(null);
  #pending: ConfigChange | null = null;

  changed = $derived(!!this.form && !!this.current && accessDiffers(this.form, this.current));

  async refresh(): Promise<void> {
    try {
      const document = await readConfig();
      this.current = document.server;
      this.form = accessFormFrom(document.server);
      this.error = null;
    } catch (error) {
      this.error = describe(error);
    }
  }

  /** Choosing to let other machines in ticks "Require an access key": the companion insists on it. */
  setExposure(exposure: AccessForm['exposure']): void {
    if (!this.form) return;
    this.form.exposure = exposure;
    if (exposure !== 'loopback') this.form.requireKeys = true;
    this.edited();
  }

  edited(): void {
    this.problems = [];
    this.error = null;
    this.risks = null;
    this.notice = null;
    this.restartWaiting = false;
    this.enabling = null;
    this.#pending = null;
  }

  addOrigin(): boolean {
    if (!this.form) return false;
    this.originError = originProblem(this.newOrigin, this.form.origins);
    if (this.originError) return false;
    this.form.origins = [...this.form.origins, normaliseOrigin(this.newOrigin)];
    this.newOrigin = '';
    this.edited();
    return true;
  }

  removeOrigin(origin: string): void {
    if (!this.form) return;
    this.form.origins = this.form.origins.filter((entry) => entry !== origin);
    this.edited();
  }

  /** Plans the change: a high-risk one waits for `confirm()`, any other is applied at once. */
  async save(): Promise<void> {
    if (!this.form) return;
    const change = accessChange(this.form);
    this.edited();
    this.saving = true;
    try {
      // Requiring keys is asked first, as its opposite is: it can shut out this app's own chat.
      if (this.form.requireKeys && this.current && !this.current.auth.required) {
        await accessKeys.refresh();
        this.enabling = { anyKey: accessKeys.activeCount > 0, browserKey: !!server.keyPrefix };
        return;
      }
      await this.#plan(change);
    } catch (error) {
      this.#failed(error);
    } finally {
      this.saving = false;
    }
  }

  /**
   * Requires keys after the person chose how: with a key created and saved for this browser first
   * (the app's chat keeps working), or as it is (another key exists, and this browser has one or
   * will be given one).
   */
  async requireKeys(withBrowserKey: boolean): Promise<void> {
    if (!this.form || !this.enabling) return;
    const change = accessChange(this.form);
    this.saving = true;
    try {
      if (withBrowserKey && !(await accessKeys.createForThisBrowser())) {
        this.error = `No key was made for this browser, so nothing was changed: ${accessKeys.error ?? 'the companion refused it'}.`;
        return;
      }
      this.enabling = null;
      await this.#plan(change);
    } catch (error) {
      this.#failed(error);
    } finally {
      this.saving = false;
    }
  }

  async #plan(change: ConfigChange): Promise<void> {
    const plan = await planChange(change);
    if (plan.risks.length > 0) {
      this.#pending = change;
      this.risks = plan.risks.map((risk) => riskText(risk, this.form!, this.#port()));
      return;
    }
    await this.#apply(change, false);
  }

  /** Applies the change whose risks are shown. */
  async confirm(): Promise<void> {
    const change = this.#pending;
    if (!change) return;
    this.saving = true;
    try {
      await this.#apply(change, true);
    } catch (error) {
      this.#failed(error);
    } finally {
      this.saving = false;
    }
  }

  /** The port Hearth listens on now (this app is served by it), which it keeps when it starts again the same way. */
  #port(): number {
    const here = typeof location === 'undefined' ? 0 : Number(location.port);
    return here || this.current?.port || 4777;
  }

  cancel(): void {
    this.risks = null;
    this.enabling = null;
    this.#pending = null;
  }

  async #apply(change: ConfigChange, confirm: boolean): Promise<void> {
    let result: ApplyResult;
    try {
      result = await applyChange(change, confirm);
    } catch (error) {
      // Something made it high-risk since the plan: ask again.
      if (error instanceof ApiError && error.code === 'confirmation_required' && !confirm) {
        const plan = await planChange(change);
        this.#pending = change;
        this.risks = plan.risks.map((risk) => riskText(risk, this.form!, this.#port()));
        return;
      }
      throw error;
    }
    this.risks = null;
    this.#pending = null;
    await this.refresh();
    const restart = restartText(result.restart_required);
    this.restartWaiting = restart !== null;
    this.notice = restart ?? 'Saved. It applies now.';
  }

  #failed(error: unknown): void {
    this.risks = null;
    this.#pending = null;
    const problems = error instanceof ApiError && error.code === 'config_invalid' ? (error.details.problems as ConfigProblem[] | undefined) : undefined;
    if (problems?.length)
      this.problems = problems
        .map((problem) => problemText(problem))
        .filter((entry, index, all) => all.findIndex((other) => other.text === entry.text) === index);
    else this.error = describe(error);
  }
}

export const serverAccess = new ServerAccessStore();
