import type { McpServiceSettings } from '#shared/api/config.js';
import { redact } from '../redaction.js';
import { ConnectFailure } from './failures.js';
import type { SecretAccess } from '../store/secrets.js';
import { StoredOAuthProvider } from './oauth.js';

/**
 * The secrets one connection hands its service (environment values, tokens, headers, its OAuth
 * sign-in), resolved from their references; everything the connection passes on (state
 * messages, logs, the service's own log messages) is cleaned of them.
 */
export class ConnectionSecrets {
  private given: string[] = [];
  /** The OAuth sign-in in use: its tokens change on refresh, so they are looked up when cleaning. */
  private oauth?: StoredOAuthProvider;

  constructor(private readonly store: SecretAccess) {}

  /** A new attempt starts with nothing given. */
  reset(): void {
    this.given = [];
  }

  /** A value from the settings, its `secret:`/`env:` reference resolved; an unset one fails the attempt (configuration). */
  resolve(value: string, field: string): string {
    if (!/^(secret|env):[A-Za-z_][A-Za-z0-9_]*$/.test(value)) return value;
    const resolved = this.store.resolve(value);
    if (resolved === undefined) {
      const [kind, name] = value.split(':');
      throw new ConnectFailure(
        'configuration',
        `${field} refers to ${kind === 'secret' ? `the secret ${name}, which is not set (hearth secret set ${name})` : `the environment variable ${name}, which is not set`}.`,
      );
    }
    this.given.push(resolved);
    return resolved;
  }

  /** The service's stored OAuth sign-in; not signed in fails the attempt (authentication). */
  signIn(settings: McpServiceSettings): StoredOAuthProvider {
    const provider = new StoredOAuthProvider(settings, this.store);
    this.oauth = provider;
    if (!provider.tokens()) throw new ConnectFailure('authentication', `Not signed in. Sign in with: hearth mcp login ${settings.name}`);
    return provider;
  }

  /** The text with every secret this connection was given replaced. */
  clean(text: string): string {
    return redact(text, this.values());
  }

  /** The secret values this connection was given, to keep out of everything it passes on. */
  values(): string[] {
    return this.oauth ? [...this.given, ...this.oauth.secretValues()] : this.given;
  }
}
