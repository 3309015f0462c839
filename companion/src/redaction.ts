/**
 * The one redaction every log line and every relayed piece of outside text goes through.
 * Secret values are replaced wherever they appear: the ones a caller names, and every value
 * this process has resolved from a secret reference or holds as a credential (remembered here
 * as they are resolved). Credential-shaped text (a Bearer or Basic authorization, a Hearth
 * key or admin token) is replaced even when its value is unknown.
 */

export const REDACTED = '[redacted]';

/** Shorter values would also match ordinary text. */
const MIN_SECRET_LENGTH = 6;
const MAX_REMEMBERED = 1000;
const remembered = new Set<string>();

const PATTERNS: [RegExp, string][] = [
  [/\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${REDACTED}`],
  [/\b(hth|hadm|hses)_[A-Za-z0-9_-]{8,}/g, REDACTED],
];

/** Remembers a secret value so that every later redaction removes it. */
export function rememberSecret(value: string): void {
  if (value.length < MIN_SECRET_LENGTH || remembered.has(value)) return;
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.values().next().value!);
  remembered.add(value);
}

/** `text` with the given and every remembered secret, and credential-shaped text, replaced by [redacted]. */
export function redact(text: string, secrets: Iterable<string> = []): string {
  let result = text;
  // Longest first, so a secret that contains another is replaced whole.
  const values = [...new Set([...secrets, ...remembered])].filter((value) => value.length >= 4).sort((a, b) => b.length - a.length);
  for (const value of values) if (result.includes(value)) result = result.split(value).join(REDACTED);
  for (const [pattern, replacement] of PATTERNS) result = result.replace(pattern, replacement);
  return result;
}

/** A copy of a value (a log argument, a service's log message) with every string redacted; errors become plain objects (type, message, stack, code). */
export function redactValue(value: unknown, secrets: readonly string[] = [], depth = 0): unknown {
  if (typeof value === 'string') return redact(value, secrets);
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) {
    const { code, statusCode } = value as Error & { code?: unknown; statusCode?: unknown };
    const cause = value.cause === undefined ? undefined : redactValue(value.cause, secrets, depth + 1);
    return { type: value.name, message: redact(value.message, secrets), stack: value.stack && redact(value.stack, secrets), code, statusCode, cause };
  }
  if (Array.isArray(value)) return value.map((item) => redactValue(item, secrets, depth + 1));
  if (Object.getPrototypeOf(value) !== Object.prototype) return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactValue(item, secrets, depth + 1)]));
}

/** A pino `hooks.logMethod`: every argument of every log call (the app's and each request's) is redacted first. */
export function redactingLogMethod(this: unknown, args: unknown[], method: (...args: unknown[]) => void): void {
  method.apply(
    this,
    args.map((argument) => redactValue(argument)),
  );
}
