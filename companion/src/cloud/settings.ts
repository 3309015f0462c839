import type { CloudWorkspaceSettings } from '#shared/api/config.js';
import { isLoopbackName } from '../access/hosts.js';

/**
 * Checks the schema cannot express: a workspace's issuer, directory and agent cards are reached
 * with its tokens, so plain http is accepted only on this machine (a test or a local gateway).
 */
export function checkCloudWorkspaces(workspaces: unknown): string[] {
  if (!Array.isArray(workspaces)) return [];
  return workspaces.flatMap((workspace: Partial<CloudWorkspaceSettings>, index) => {
    const urls: [string, unknown][] = [
      ['issuer', workspace?.issuer],
      ['directory', workspace?.directory],
      ...(Array.isArray(workspace?.agent_cards) ? workspace.agent_cards.map((url, item): [string, unknown] => [`agent_cards[${item}]`, url]) : []),
    ];
    return urls.flatMap(([field, value]) => {
      if (typeof value !== 'string') return [];
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return [`cloud_workspaces[${index}].${field}: is not a valid URL`];
      }
      if (url.protocol === 'http:' && !isLoopbackName(url.hostname.replace(/^\[|\]$/g, '')))
        return [`cloud_workspaces[${index}].${field}: must be https:// (plain http only for this machine); tokens are sent there`];
      return [];
    });
  });
}

/** The secret under which a workspace's sign-in (tokens and the account they are bound to) is kept. */
export function signInSecretName(workspace: string): string {
  return `CLOUD_SIGNIN_${workspace.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** Whether a URL is on this machine (plain http is allowed there: see checkCloudWorkspaces). */
export function isLocalUrl(value: string): boolean {
  return isLoopbackName(new URL(value).hostname.replace(/^\[|\]$/g, ''));
}
