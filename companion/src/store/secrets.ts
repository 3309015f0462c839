import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { rememberSecret } from '../redaction.js';
import { writeFileAtomic } from './files.js';

/**
 * What code that keeps secrets of its own (sign-ins, device credentials) uses of the secrets file
 * (mode 0600), never the configuration document.
 */
export interface SecretAccess {
  /** `secret:NAME` or `env:NAME`; undefined when unset. */
  resolve(reference: string): string | undefined;
  set(name: string, value: string): void;
  delete(name: string): boolean;
}

/**
 * Secret values live in one JSON file with mode 0600; the configuration holds only references
 * (`secret:NAME`, `env:NAME`), so exports and logs never see a value.
 */
export class SecretStore implements SecretAccess {
  private cached: Record<string, string> = {};
  private stamp = '';

  constructor(private readonly file: string) {
    if (existsSync(file)) chmodSync(file, 0o600);
    this.values();
  }

  names(): string[] {
    return Object.keys(this.values()).sort();
  }

  set(name: string, value: string): void {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Error(`Secret names are letters, digits and underscores; "${name}" is not.`);
    this.write({ ...this.values(), [name]: value });
  }

  delete(name: string): boolean {
    const { [name]: removed, ...rest } = this.values();
    if (removed === undefined) return false;
    this.write(rest);
    return true;
  }

  /** `secret:NAME` from this store, `env:NAME` from the environment; undefined when unset. */
  resolve = (reference: string): string | undefined => {
    const [kind, name] = splitReference(reference);
    const value = kind === 'secret' ? this.values()[name] : kind === 'env' ? process.env[name] : undefined;
    // Every value handed out is kept out of logs and relayed errors from then on.
    if (value !== undefined) rememberSecret(value);
    return value;
  };

  /** The file's values, re-read when another process (`hearth secret set`) changed it. */
  private values(): Record<string, string> {
    const info = statSync(this.file, { throwIfNoEntry: false });
    const stamp = info ? `${info.mtimeMs}:${info.size}` : 'none';
    if (stamp !== this.stamp) {
      this.cached = stamp === 'none' ? {} : parseSecrets(this.file);
      this.stamp = stamp;
    }
    return this.cached;
  }

  private write(values: Record<string, string>): void {
    writeFileAtomic(this.file, JSON.stringify(values, null, 2), 0o600);
    this.cached = values;
    this.stamp = '';
  }
}

export function splitReference(reference: string): [string, string] {
  const colon = reference.indexOf(':');
  return colon < 0 ? ['', reference] : [reference.slice(0, colon), reference.slice(colon + 1)];
}

export class SecretsFileError extends Error {
  constructor(file: string) {
    // The parser's own message would quote the file, and so possibly a secret: never include it.
    super(
      `${file} is not a valid secrets file (a JSON object of names to strings). Fix it, or remove it and set the secrets again with: hearth secret set NAME`,
    );
    this.name = 'SecretsFileError';
  }
}

function parseSecrets(file: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    throw new SecretsFileError(file);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.values(parsed).every((value) => typeof value === 'string')) {
    throw new SecretsFileError(file);
  }
  return parsed as Record<string, string>;
}
