/**
 * The Server screen's switch for apps that expect Ollama: the configuration change it saves, and
 * the listener's state in words (never the setting's name).
 */
import type { OllamaListenerStatus } from '#shared/api/admin.js';
import type { OllamaListenerSettings } from '#shared/api/config.js';
import type { ConfigChange } from '$lib/api/settings';

export function ollamaChange(enabled: boolean): ConfigChange {
  return { version: 1, server: { ollama: { enabled } } };
}

/** The switch's label: the port apps will look at. */
export function switchLabel(settings: OllamaListenerSettings): string {
  return `Answer apps that expect Ollama (port ${settings.port || 'chosen at start'})`;
}

/**
 * What is true now, in words: the saved setting and the listener can differ until Hearth restarts
 * (the screen puts Restart now beside those words: `waitsForRestart`), and a port taken by another
 * program leaves it closed.
 */
export function listenerText(settings: OllamaListenerSettings, status: OllamaListenerStatus | undefined): string {
  if (status?.state === 'refused') return `Not answering as Ollama: ${status.problem ?? 'its port could not be opened.'}`;
  if (status?.state === 'listening' && settings.enabled) return `Answering as Ollama at ${status.url ?? `port ${settings.port}`}.`;
  if (status?.state === 'listening') return `Turned off, but still answering as Ollama at ${status.url ?? `port ${settings.port}`} until Hearth restarts.`;
  if (settings.enabled) return 'Turned on: apps that expect Ollama are answered once Hearth restarts.';
  return "Off. Apps with an Ollama setting can still use Hearth: give them this server's address (its /api answers as Ollama does).";
}

/** Whether the saved setting waits for a restart: turned on but not answering yet, or turned off but still answering. */
export function waitsForRestart(settings: OllamaListenerSettings, status: OllamaListenerStatus | undefined): boolean {
  return settings.enabled ? status?.state === 'off' : status?.state === 'listening';
}
