/** Replaces every occurrence of the given secret values (4 characters or longer) with [redacted]. */
export function redact(text: string, secrets: Iterable<string>): string {
  let result = text;
  for (const secret of secrets) {
    if (secret.length >= 4) result = result.split(secret).join('[redacted]');
  }
  return result;
}
