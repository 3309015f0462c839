/**
 * The load settings of one local model at a time (Models screen): the form, its memory estimate
 * (asked of the companion as the form changes), saving through the configuration's apply, and
 * reloading a loaded model so the new settings take effect.
 */
import { draftCandidates, loadModel, unloadModel } from '$lib/api/server';
import { applyChange, estimateModel } from '$lib/api/settings';
import { changeFor, differs, formFrom, formProblems, settingsOf, type LoadForm } from '$lib/settings/model-load';
import type { DraftCandidates, ModelEstimate } from '#shared/api/admin.js';
import { adminProblem } from './problems';

/** How long the form waits after a change before asking for a new estimate. */
const ESTIMATE_DELAY_MS = 250;

const describe = (error: unknown) => adminProblem(error, 'change how models load');

export class ModelSettingsStore {
  /** The model whose settings are open. */
  id = $state<string | null>(null);
  form = $state<LoadForm | null>(null);
  /** The model's settings as saved (with its defaults), from the last estimate of the saved settings. */
  saved = $state<ModelEstimate | null>(null);
  /** The estimate of what the form says. */
  estimate = $state<ModelEstimate | null>(null);
  estimating = $state(false);
  saving = $state(false);
  error = $state<string | null>(null);
  notice = $state<string | null>(null);
  /** The installed models that could draft for this one, each with why it cannot when it cannot. */
  drafts = $state<DraftCandidates | null>(null);
  draftsError = $state<string | null>(null);

  /** The context the model was trained on: it never loads with more. */
  trained = $derived(this.saved?.trained_context ?? null);
  problems = $derived(this.form ? formProblems(this.form, this.trained) : {});
  /** The form says something other than what is saved, and says it validly. */
  canSave = $derived(!!this.form && !!this.saved && Object.keys(this.problems).length === 0 && differs(this.form, this.saved.settings, this.trained));

  #timer: ReturnType<typeof setTimeout> | undefined;
  #asking: AbortController | undefined;

  /** Opens (or closes, when it is open) the settings of a model. */
  async toggle(id: string): Promise<void> {
    if (this.id === id) return this.close();
    this.close();
    this.id = id;
    void this.#readDrafts(id);
    try {
      const saved = await estimateModel(id, {});
      if (this.id !== id) return;
      this.saved = saved;
      this.estimate = saved;
      this.form = formFrom(saved.settings, saved.trained_context);
    } catch (error) {
      if (this.id === id) this.error = describe(error);
    }
  }

  async #readDrafts(id: string): Promise<void> {
    try {
      const drafts = await draftCandidates(id);
      if (this.id === id) this.drafts = drafts;
    } catch (error) {
      if (this.id === id) this.draftsError = describe(error);
    }
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#asking?.abort();
    this.id = null;
    this.form = null;
    this.saved = null;
    this.estimate = null;
    this.error = null;
    this.notice = null;
    this.drafts = null;
    this.draftsError = null;
  }

  /** The form changed: a new estimate shortly (the latest change wins). */
  changed(): void {
    this.notice = null;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.#estimateNow(), ESTIMATE_DELAY_MS);
  }

  /** Puts the defaults in the form (saved with Save). */
  useDefaults(): void {
    if (!this.saved) return;
    this.form = formFrom(this.saved.defaults, this.saved.trained_context);
    this.changed();
  }

  async #estimateNow(): Promise<void> {
    const id = this.id;
    if (!id || !this.form) return;
    this.#asking?.abort();
    const asking = (this.#asking = new AbortController());
    this.estimating = true;
    try {
      const estimate = await estimateModel(id, settingsOf(this.form), asking.signal);
      if (!asking.signal.aborted) this.estimate = estimate;
    } catch (error) {
      if (!asking.signal.aborted) this.error = describe(error);
    } finally {
      if (this.#asking === asking) this.estimating = false;
    }
  }

  /**
   * Saves the form through the configuration (config.yaml); a model loaded now is loaded again so
   * that it runs with them. Returns whether it was saved.
   */
  async save(): Promise<boolean> {
    const id = this.id;
    if (!id || !this.form || !this.saved || !this.canSave) return false;
    this.saving = true;
    this.error = null;
    this.notice = null;
    try {
      const result = await applyChange(changeFor(id, this.form, this.saved.defaults, this.saved.saved, this.trained), false);
      const reload = result.reload_required.includes(id);
      let reloadFailure: string | null = null;
      if (reload) {
        try {
          await unloadModel(id);
          await loadModel(id);
        } catch (error) {
          reloadFailure = `Saved, but ${id} could not be loaded again with these settings: ${describe(error)}`;
        }
      }
      const saved = await estimateModel(id, {});
      if (this.id === id) {
        this.saved = saved;
        this.estimate = saved;
        this.form = formFrom(saved.settings, saved.trained_context);
        if (reloadFailure) this.error = reloadFailure;
        else this.notice = reload ? `Saved, and ${id} was loaded again with these settings.` : `Saved. ${id} uses these settings the next time it loads.`;
      }
      return true;
    } catch (error) {
      if (this.id === id) this.error = describe(error);
      return false;
    } finally {
      this.saving = false;
    }
  }
}

export const modelSettings = new ModelSettingsStore();
