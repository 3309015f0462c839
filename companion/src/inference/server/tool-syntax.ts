/**
 * A chat wrapper's function-call syntax as text, for the server engine: the words that start a call
 * (lazy-grammar triggers), one GBNF grammar for `prefix name paramsPrefix params suffix` (parallel
 * calls joined the wrapper's way), and the parser that reads the calls back from the generated text.
 * node-llama-cpp's in-process loop writes the same syntax in stages; here the model writes it under
 * one grammar that llama-server applies once a trigger appears.
 */
import type { ChatWrapper, LlamaText } from 'node-llama-cpp';
import { binding } from '../binding.js';
import { embedJsonGrammar, literal } from './gbnf.js';

export interface CallSyntax {
  /** Texts that start a call in the output; the grammar applies from the trigger on. */
  triggers: string[];
  /** What the first call opens with: the section prefix (for parallel calls) and the call prefix. */
  opening: string;
  /** What each further call opens with. */
  prefix: string;
  optionalSpace: boolean;
  paramsPrefix: (name: string) => string;
  suffix: (name: string) => string;
  /** Between parallel calls; undefined when the wrapper makes one call at a time. */
  between?: string;
  /** Params written for a tool without parameters. */
  emptyParams: string;
}

type TextLike = string | LlamaText | undefined;

/** The text of a LlamaText, or undefined when it holds a special token (BOS, EOS) no text can stand for. */
export function plainText(value: TextLike, options: { dropTrailingTokens?: boolean } = {}): string | undefined {
  if (value === undefined) return '';
  const { LlamaText, SpecialTokensText } = binding();
  const values = [...LlamaText(value).values];
  if (options.dropTrailingTokens) while (values.length > 0 && typeof values.at(-1) === 'object' && !(values.at(-1) instanceof SpecialTokensText)) values.pop();
  let text = '';
  for (const part of values) {
    if (typeof part === 'string') text += part;
    else if (part instanceof SpecialTokensText) text += part.value;
    else return undefined;
  }
  return text;
}

/** The wrapper's call syntax, or why the server engine cannot drive it. */
export function callSyntax(wrapper: ChatWrapper): CallSyntax | { unsupported: string } {
  const call = wrapper.settings.functions.call;
  const section = wrapper.settings.functions.parallelism?.call;
  const prefix = plainText(call.prefix);
  const sectionPrefix = plainText(section?.sectionPrefix);
  const paramsPrefix = plainText(call.paramsPrefix);
  const suffix = plainText(call.suffix, { dropTrailingTokens: true });
  const between = plainText(section?.betweenCalls);
  if (prefix === undefined || sectionPrefix === undefined || paramsPrefix === undefined || suffix === undefined || between === undefined) {
    return { unsupported: `its chat format (${wrapper.wrapperName}) marks tool calls with special tokens that have no text` };
  }
  const opening = sectionPrefix + prefix;
  const alternates = (call.prefixAlternateMatches ?? []).map((match) => plainText(match)).filter((text): text is string => text !== undefined);
  const triggers = [...new Set([opening, ...alternates.map((alternate) => sectionPrefix + alternate)].map((text) => text.trimEnd()).filter(Boolean))];
  if (triggers.length === 0) return { unsupported: `its chat format (${wrapper.wrapperName}) has no text that starts a tool call` };
  const placeholder = call.emptyCallParamsPlaceholder;
  const withName = (text: string) => (name: string) => text.replaceAll('{{functionName}}', name);
  return {
    triggers,
    opening,
    prefix,
    optionalSpace: call.optionalPrefixSpace === true,
    paramsPrefix: withName(paramsPrefix),
    suffix: withName(suffix),
    between: section ? between : undefined,
    emptyParams: placeholder === undefined || placeholder === '' ? '' : JSON.stringify(placeholder),
  };
}

/**
 * The lazy grammar for tool calls: from a trigger, one call (or several, where the wrapper allows
 * parallel calls) of the offered tools, each with its parameters' JSON grammar (node-llama-cpp's,
 * given per tool; undefined for a tool without parameters).
 */
export function toolCallGrammar(syntax: CallSyntax, tools: { name: string; paramsGrammar?: string }[]): string {
  const space = syntax.optionalSpace ? ' [ ]?' : '';
  const openings = syntax.triggers.map((trigger) => {
    const rest = syntax.opening.startsWith(trigger) ? syntax.opening.slice(trigger.length) : '';
    return `${literal(trigger)}${rest ? ` ${literal(rest)}?` : ''}`;
  });
  const rules = [
    `root ::= (${openings.join(' | ')})${space} call${syntax.between !== undefined ? ` (${literal(syntax.between + syntax.prefix)}${space} call)*` : ''}`,
    `call ::= ${tools.map((_tool, index) => `tool${index}`).join(' | ')}`,
  ];
  tools.forEach((tool, index) => {
    const params = tool.paramsGrammar ? `t${index}-root` : syntax.emptyParams ? literal(syntax.emptyParams) : '';
    rules.push(
      `tool${index} ::= ${[literal(tool.name), literal(syntax.paramsPrefix(tool.name)), params, literal(syntax.suffix(tool.name))].filter((part) => part && part !== '""').join(' ')}`,
    );
    if (tool.paramsGrammar) rules.push(embedJsonGrammar(tool.paramsGrammar, `t${index}-`));
  });
  return rules.join('\n');
}

export interface ParsedCalls {
  /** The text before the first call. */
  text: string;
  calls: { name: string; params: unknown }[];
  /** False when the output ended inside a call (max_tokens or a cancel cut it short). */
  complete: boolean;
}

/** Reads the calls the grammar let the model write; text without a trigger is all text. */
export function parseCalls(output: string, syntax: CallSyntax, names: string[]): ParsedCalls {
  const start = firstTrigger(output, syntax.triggers);
  if (!start) return { text: output, calls: [], complete: true };
  const calls: ParsedCalls['calls'] = [];
  let at = start.index + start.trigger.length;
  const rest = syntax.opening.startsWith(start.trigger) ? syntax.opening.slice(start.trigger.length) : '';
  if (rest && output.startsWith(rest, at)) at += rest.length;
  const byLength = [...names].sort((a, b) => b.length - a.length);
  for (;;) {
    if (syntax.optionalSpace && output[at] === ' ') at++;
    const name = byLength.find((candidate) => output.startsWith(candidate + syntax.paramsPrefix(candidate), at));
    if (!name) return { text: output.slice(0, start.index), calls, complete: false };
    at += name.length + syntax.paramsPrefix(name).length;
    let params: unknown = undefined;
    const end = jsonEnd(output, at);
    if (end !== undefined && output.startsWith(syntax.suffix(name), end)) {
      const raw = output.slice(at, end).trim();
      params = raw === '' ? undefined : JSON.parse(raw);
      at = end;
    } else if (output.startsWith(syntax.suffix(name), at)) {
      params = undefined;
    } else return { text: output.slice(0, start.index), calls, complete: false };
    at += syntax.suffix(name).length;
    calls.push({ name, params });
    const next = syntax.between !== undefined ? syntax.between + syntax.prefix : undefined;
    if (next === undefined || !output.startsWith(next, at)) break;
    at += next.length;
  }
  return { text: output.slice(0, start.index), calls, complete: true };
}

export function firstTrigger(text: string, triggers: string[]): { index: number; trigger: string } | undefined {
  let best: { index: number; trigger: string } | undefined;
  for (const trigger of triggers) {
    const index = text.indexOf(trigger);
    if (index >= 0 && (!best || index < best.index)) best = { index, trigger };
  }
  return best;
}

/** Where the JSON value starting at `from` (after whitespace) ends, or undefined when it does not end. */
function jsonEnd(text: string, from: number): number | undefined {
  let at = from;
  while (/\s/.test(text[at] ?? '')) at++;
  const first = text[at];
  if (first === undefined) return undefined;
  if (first !== '{' && first !== '[' && first !== '"') {
    const scalar = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(at));
    return scalar ? at + scalar[0].length : undefined;
  }
  let depth = 0;
  for (let index = at; index < text.length; index++) {
    const char = text[index];
    if (char === '"') {
      index++;
      while (index < text.length && text[index] !== '"') index += text[index] === '\\' ? 2 : 1;
      if (index >= text.length) return undefined;
      if (depth === 0) return index + 1;
    } else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') {
      depth--;
      if (depth === 0) return index + 1;
    }
  }
  return undefined;
}
