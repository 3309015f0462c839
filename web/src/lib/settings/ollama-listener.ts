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
 * What is true now, in words: the saved setting and the listener can differ until Hearth starts
 * again, and a port taken by another program leaves it closed.
 */
export function listenerText(settings: OllamaListenerSettings, status: OllamaListenerStatus | undefined, startAdvice: string): string {
  if (status?.state === 'refused') return `Not answering as Ollama: ${status.problem ?? 'its port could not be opened.'}`;
  if (status?.state === 'listening' && settings.enabled) return `Answering as Ollama at ${status.url ?? `port ${settings.port}`}.`;
  if (status?.state === 'listening')
    return `Still answering as Ollama at ${status.url ?? `port ${settings.port}`} until Hearth starts again: stop it (Ctrl+C where it runs) and ${startAdvice}.`;
  if (settings.enabled) return `Turned on: apps that expect Ollama are answered once Hearth starts again: stop it (Ctrl+C where it runs) and ${startAdvice}.`;
  return "Off. Apps with an Ollama setting can still use Hearth: give them this server's address (its /api answers as Ollama does).";
}
