import { existsSync, readFileSync } from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { dataPaths } from '../store/data-dir.js';
import { takeDataDir } from './data-dir-option.js';
import type { CommandContext } from './context.js';

/** The running companion's loopback address, from `<data-dir>/server.json` (or --url). */
export function companionUrl(dataDir: string, url?: string): string | undefined {
  if (url) return url.replace(/\/+$/, '');
  const file = dataPaths(dataDir).server;
  if (!existsSync(file)) return undefined;
  return (JSON.parse(readFileSync(file, 'utf8')) as { url: string }).url;
}

export interface Answer<T> {
  ok: boolean;
  status: number;
  body: T;
}

/** One JSON request to the running companion's admin routes. */
export async function adminCall<T>(base: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<Answer<T>> {
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: init.body === undefined ? {} : { 'content-type': 'application/json' },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = { error: { message: `The server answered ${response.status} with a body that is not JSON.` } };
  }
  return { ok: response.ok, status: response.status, body: body as T };
}

/** Writes the error message of a failed answer; returns exit code 1. */
export function failure(context: CommandContext, body: unknown): number {
  const error = (body as { error?: { message?: string } }).error;
  context.stderr.write(`${error?.message ?? 'The server answered with an unexpected body.'}\n`);
  return 1;
}

export function usage(context: CommandContext, text: string, problem?: string): number {
  context.stderr.write(`${problem ? `${problem}\n\n` : ''}${text}\n`);
  return 2;
}

interface Parsed {
  base: string;
  positionals: string[];
  values: Record<string, string | boolean | string[] | undefined>;
}

/**
 * The common start of a subcommand that talks to the running companion: --data-dir, --url and
 * --help are taken; the rest is parsed with `options`, and the first positional must be one of `actions`. Returns an exit code when it is done already.
 */
export function startCommand(
  argv: string[],
  context: CommandContext,
  text: string,
  options: NonNullable<ParseArgsConfig['options']>,
  actions: string[],
): number | Parsed {
  const { dataDir, rest } = takeDataDir(argv, context.env);
  let values: Record<string, string | boolean | string[] | undefined>;
  let positionals: string[];
  try {
    const all: ParseArgsConfig['options'] = { ...options, url: { type: 'string' }, help: { type: 'boolean', short: 'h' } };
    ({ values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: all }) as Omit<Parsed, 'base'>);
  } catch (error) {
    return usage(context, text, (error as Error).message);
  }
  if (values.help) {
    context.stdout.write(`${text}\n`);
    return 0;
  }
  if (!positionals[0]) return usage(context, text, 'Say what to do.');
  if (!actions.includes(positionals[0])) return usage(context, text, `Unknown command "${positionals[0]}".`);
  const base = companionUrl(dataDir, values.url as string | undefined);
  if (!base) {
    context.stderr.write(`No Hearth server is running on ${dataDir}. Start it with: hearth serve (or pass --url).\n`);
    return 1;
  }
  return { base, positionals, values };
}
