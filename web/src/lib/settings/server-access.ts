/**
 * The Server screen's access settings: who may connect (this machine only, or the network),
 * whether the API needs an access key, and which other web pages may call it. Pure functions:
 * the form, the configuration change it saves, and the companion's answers (problems, risks, a
 * restart) in words, never its setting names.
 */
import type { ConfigProblem, ConfigRisk } from '#shared/api/admin-config.js';
import type { ServerSettings } from '#shared/api/config.js';
import type { ConfigChange } from '$lib/api/settings';

export interface AccessForm {
  /** loopback: this machine only; network: every network this machine is on; other: an address set in the file. */
  exposure: 'loopback' | 'network' | 'other';
  /** The address when `exposure` is other (kept as it is). */
  host: string;
  requireKeys: boolean;
  origins: string[];
}

const LOOPBACK = ['127.0.0.1', 'localhost', '::1', '[::1]'];
const EVERYWHERE = ['0.0.0.0', '::', '[::]'];

export function accessFormFrom(server: ServerSettings): AccessForm {
  const exposure = LOOPBACK.includes(server.host) ? 'loopback' : EVERYWHERE.includes(server.host) ? 'network' : 'other';
  return { exposure, host: server.host, requireKeys: server.auth.required, origins: [...server.cors.origins] };
}

/** The address the form asks the companion to listen on. */
export function hostOf(form: AccessForm): string {
  return form.exposure === 'loopback' ? '127.0.0.1' : form.exposure === 'network' ? '0.0.0.0' : form.host;
}

export function accessChange(form: AccessForm): ConfigChange {
  return { version: 1, server: { host: hostOf(form), auth: { required: form.requireKeys }, cors: { origins: form.origins } } };
}

/** Whether the form differs from the settings in force. */
export function accessDiffers(form: AccessForm, server: ServerSettings): boolean {
  return (
    hostOf(form) !== server.host ||
    form.requireKeys !== server.auth.required ||
    form.origins.length !== server.cors.origins.length ||
    form.origins.some((origin, index) => origin !== server.cors.origins[index])
  );
}

/** An origin as the companion compares them: scheme, host and port, lowercase, without a trailing slash. */
export function normaliseOrigin(text: string): string {
  const trimmed = text.trim().replace(/\/+$/, '');
  if (trimmed === '*') return trimmed;
  const match = /^(https?):\/\/([^/\s?#]+)$/i.exec(trimmed);
  return match ? `${match[1]!.toLowerCase()}://${match[2]!.toLowerCase()}` : trimmed;
}

/** Why an origin cannot be added, in words; null when it can. */
export function originProblem(text: string, origins: string[]): string | null {
  const origin = normaliseOrigin(text);
  if (!origin) return 'Type the address of the web page, such as http://localhost:5173.';
  if (origin !== '*' && !/^https?:\/\/[^/\s?#]+$/.test(origin))
    return 'Write only the scheme, the host and the port, such as http://localhost:5173: no path, nothing after the address.';
  if (origins.includes(origin)) return `${origin} is already allowed.`;
  return null;
}

/** A problem the companion found in the change, in words for this form (what to do in the app, never a command). */
export function problemText(problem: ConfigProblem): { text: string; command?: string } {
  if (problem.path === 'server.auth.required' && /no access key exists/.test(problem.message))
    return {
      text: 'An access key can be required only once one exists: otherwise every program, this app too, would be shut out. Create a key first (Access keys, below), then save again.',
    };
  if (problem.path === 'server.auth.required')
    return { text: 'Other machines can be let in only when an access key is required: tick “Require an access key”, or keep Hearth on this machine only.' };
  if (problem.path === 'server.host' && /access key/.test(problem.message))
    return { text: 'Other machines can be let in only with an access key, and none exists yet. Create one under Access keys below, then save again.' };
  if (/^server\.cors\.origins\[\d+\]$/.test(problem.path))
    return { text: 'One of the web pages is not written as an address such as http://localhost:5173 (scheme, host and port only).' };
  return { text: `The companion refused this change: ${problem.message}.` };
}

/** A high-risk part of the change, in words: what it would open up. */
export function riskText(risk: ConfigRisk, form: AccessForm, port: number): string {
  switch (risk.code) {
    case 'listen_beyond_loopback':
      return form.exposure === 'other'
        ? `Other machines could reach Hearth at ${form.host}, port ${port}. They need an access key to use it; managing Hearth stays possible on this machine only.`
        : `Other machines on your networks could reach Hearth at this computer's addresses, port ${port}. They need an access key to use it; managing Hearth stays possible on this machine only.`;
    case 'auth_disabled':
      return 'Programs on this machine could use the API without an access key.';
    case 'cors_widened': {
      const added = risk.message.match(/Web pages from (.+) could call Hearth from a browser\./)?.[1];
      return added === '*'
        ? 'Any web page open in a browser on this machine could call Hearth.'
        : `Web pages from ${added ?? 'the new addresses'} could call Hearth from a browser.`;
    }
    default:
      return risk.message;
  }
}

/** What a saved change waits for (the screen puts Restart now beside it), or null when it is in force already. */
export function restartText(restart: string[]): string | null {
  if (!restart.some((path) => path.startsWith('server.'))) return null;
  return 'Saved. The new address takes effect when Hearth starts again.';
}
