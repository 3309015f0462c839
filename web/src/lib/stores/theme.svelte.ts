/**
 * The colour theme: light, dark, or following the system, remembered per browser. The page's
 * inline start-up script (app.html) applies the saved choice before the first paint, so a
 * reload never flashes the other theme; this store changes it and follows the system.
 */

import { listen } from './listen';

export type ThemeChoice = 'system' | 'light' | 'dark';

/** Read by app.html's inline script too: keep the two in step. */
export const THEME_KEY = 'hearth.theme';
const BACKGROUND = { light: '#f7f1ea', dark: '#1f1a17' } as const;
const DARK_QUERY = '(prefers-color-scheme: dark)';

function readChoice(): ThemeChoice {
  try {
    const saved = globalThis.localStorage?.getItem(THEME_KEY);
    return saved === 'light' || saved === 'dark' ? saved : 'system';
  } catch {
    return 'system';
  }
}

export class ThemeStore {
  choice = $state<ThemeChoice>(readChoice());

  /** The theme shown now. */
  get shown(): 'light' | 'dark' {
    if (this.choice !== 'system') return this.choice;
    return typeof matchMedia !== 'undefined' && matchMedia(DARK_QUERY).matches ? 'dark' : 'light';
  }

  choose(choice: ThemeChoice): void {
    this.choice = choice;
    try {
      if (choice === 'system') localStorage.removeItem(THEME_KEY);
      else localStorage.setItem(THEME_KEY, choice);
    } catch {
      // Not remembered (storage off); it still applies to this page.
    }
    this.apply();
  }

  apply(): void {
    if (typeof document === 'undefined') return;
    const shown = this.shown;
    document.documentElement.dataset.theme = shown;
    for (const meta of document.querySelectorAll<HTMLMetaElement>('meta[name="theme-color"]')) meta.content = BACKGROUND[shown];
  }

  /** Follows the system's setting (while the choice is "system") and choices made in other tabs; returns the stop function. */
  watch(): () => void {
    this.apply();
    const query = matchMedia(DARK_QUERY);
    const systemChanged = () => this.apply();
    const storage = (event: StorageEvent) => {
      if (event.key !== THEME_KEY && event.key !== null) return;
      this.choice = readChoice();
      this.apply();
    };
    return listen([query, 'change', systemChanged], [window, 'storage', storage]);
  }
}

export const theme = new ThemeStore();
