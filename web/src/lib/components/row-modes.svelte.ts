import { tick } from 'svelte';

/**
 * Which row of a list is open, one at a time: the row being edited in place (with the text being
 * typed), and the row asking before it is removed. Opening one moves the focus to the field or
 * button given, once it is drawn.
 */
export class RowModes {
  editing = $state<string | null>(null);
  draft = $state('');
  confirming = $state<string | null>(null);

  /** Opens row `id` for editing, starting from `text`; `focus` is the id of the field to type in. */
  async edit(id: string, text: string, focus: string): Promise<void> {
    this.editing = id;
    this.draft = text;
    this.confirming = null;
    await focusWhenDrawn(focus);
  }

  /** Asks before row `id` is removed; `focus` is the id of the button that keeps it. */
  async ask(id: string, focus: string): Promise<void> {
    this.confirming = id;
    this.editing = null;
    await focusWhenDrawn(focus);
  }
}

async function focusWhenDrawn(id: string): Promise<void> {
  await tick();
  document.getElementById(id)?.focus();
}
