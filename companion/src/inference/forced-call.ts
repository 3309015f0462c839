/**
 * A forced tool call is generated under a grammar as `{"name": <tool>, "arguments": <its schema>}`.
 * When max_tokens or a cancel cuts it short, the client gets what OpenAI returns: the call in
 * tool_calls with the arguments produced so far (partial JSON text), never the wrapper as text.
 */
export interface ForcedCall {
  name: string;
  /** JSON text of the arguments; partial when `complete` is false. */
  arguments: string;
  complete: boolean;
}

const HEAD = /^\s*\{\s*"name"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"arguments"\s*:\s*/;

/** Reads the wrapper text; `names` are the tools the call could choose from (the grammar allowed no other). */
export function readForcedCall(text: string, names: string[]): ForcedCall {
  try {
    const parsed = JSON.parse(text) as { name: string; arguments: unknown };
    return { name: parsed.name, arguments: JSON.stringify(parsed.arguments ?? {}), complete: true };
  } catch {
    // Cut short: below.
  }
  const head = HEAD.exec(text);
  if (head) return { name: JSON.parse(head[1]!) as string, arguments: withoutWrapperEnd(text.slice(head[0].length)), complete: false };
  // The name itself was cut: the grammar only allowed these names, so its start picks one.
  const started = /"name"\s*:\s*"((?:[^"\\]|\\.)*)$/.exec(text)?.[1] ?? '';
  return { name: names.find((name) => name.startsWith(started)) ?? names[0] ?? '', arguments: '', complete: false };
}

/** The arguments text without the wrapper's closing brace, when the arguments were complete but the wrapper was not. */
function withoutWrapperEnd(rest: string): string {
  const trimmed = rest.trimEnd();
  if (!trimmed.endsWith('}')) return rest;
  try {
    JSON.parse(trimmed.slice(0, -1));
    return trimmed.slice(0, -1).trimEnd();
  } catch {
    return rest;
  }
}
