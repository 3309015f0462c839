/** The value of a JSON text, or undefined when the text is not JSON (a cut-off answer, a stray line). */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** Whether a parsed JSON value is an object (not null, not an array), so its fields can be read. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
