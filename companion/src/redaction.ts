/**
 * The one redaction every log line and every relayed piece of outside text goes through.
 * Secret values are replaced wherever they appear, also encoded or in another case: the ones a
 * caller names, and every value this process has resolved from a secret reference or holds as
 * a credential (remembered here as they are resolved). Credential-shaped text (a Bearer or
 * Basic authorization, a Hearth key or admin token) is replaced even when its value is unknown.
 */

export const REDACTED = '[redacted]';

/** Shorter values would also match ordinary text. */
const MIN_SECRET_LENGTH = 6;
/** Values at least this long are also looked for encoded (shorter encodings would match ordinary text). */
const MIN_ENCODED_LENGTH = 8;
const MAX_REMEMBERED = 1000;
/** Each remembered secret -> the forms it is looked for in (lower-cased). */
const remembered = new Map<string, string[]>();

const PATTERNS: [RegExp, string][] = [
  [/\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}/gi, `$1$2${REDACTED}`],
  [/\b(hth|hadm|hses)_[A-Za-z0-9_-]{8,}/g, REDACTED],
];

/**
 * The ways a service writes a secret back when it echoes a request (lower-cased; matched in any
 * case): as it is, URL-encoded, JSON-escaped, as hex, and as base64 (standard and URL-safe) at any
 * of the three offsets it can have inside longer base64 text, such as a Basic credential or an
 * encoded header block: only the characters that depend on the secret alone are kept.
 */
function formsOf(value: string): string[] {
  const forms = new Set([value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1), JSON.stringify(value).slice(1, -1).replaceAll('/', '\\/')]);
  if (value.length >= MIN_ENCODED_LENGTH) {
    const bytes = Buffer.from(value);
    forms.add(bytes.toString('hex'));
    for (const offset of [0, 1, 2]) {
      const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
      const core = encoded.slice([0, 2, 3][offset], Math.floor(((offset + bytes.length) * 8) / 6));
      forms.add(core);
      forms.add(core.replaceAll('+', '-').replaceAll('/', '_'));
    }
  }
  return [...forms].map((form) => form.toLowerCase());
}

/** Remembers a secret value so that every later redaction removes it. */
export function rememberSecret(value: string): void {
  if (value.length < MIN_SECRET_LENGTH || remembered.has(value)) return;
  if (remembered.size >= MAX_REMEMBERED) remembered.delete(remembered.keys().next().value!);
  remembered.set(value, formsOf(value));
}

/** `text` with the given and every remembered secret (in any of its forms), and credential-shaped text, replaced by [redacted]. */
export function redact(text: string, secrets: Iterable<string> = []): string {
  let result = text;
  const given = [...new Set(secrets)].filter((value) => value.length >= 4);
  // Exactly as given first (whatever its characters), longest first so a secret that contains another is replaced whole.
  const values = [...new Set([...given, ...remembered.keys()])].sort((a, b) => b.length - a.length);
  for (const value of values) if (result.includes(value)) result = result.split(value).join(REDACTED);
  const lower = result.toLowerCase();
  const found = new Set<string>();
  const look = (forms: string[]) => {
    for (const form of forms) if (lower.includes(form)) found.add(form);
  };
  for (const value of given) look(remembered.get(value) ?? formsOf(value));
  for (const forms of remembered.values()) look(forms);
  if (found.size > 0) {
    const alternatives = [...found].sort((a, b) => b.length - a.length).map((form) => form.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    result = result.replace(new RegExp(alternatives.join('|'), 'gi'), REDACTED);
  }
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
