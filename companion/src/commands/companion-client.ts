import type { ParseArgsConfig } from 'node:util';
import { adminClient, type AdminClient } from './admin-client.js';
import { helpHint, parseCommandArgs } from './arguments.js';
import { takeDataDir } from './data-dir-option.js';
import type { CommandContext } from './context.js';

export interface Answer<T> {
  ok: boolean;
  status: number;
  body: T;
}

/** One JSON request to the running companion's admin routes, with the admin credential. */
export async function adminCall<T>(client: AdminClient, path: string, init: { method?: string; body?: unknown } = {}): Promise<Answer<T>> {
  const response = await client.fetch(path, {
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

/** An argument error of a command whose usage is `text`: its cause and where to read the options, not the whole usage; exit code 2. */
export function usage(context: CommandContext, text: string, problem: string): number {
  const name = /\bhearth ([a-z]+)/.exec(text)?.[1];
  context.stderr.write(`${name ? `hearth ${name}: ` : ''}${problem}\n${helpHint(name)}\n`);
  return 2;
}

interface Parsed {
  client: AdminClient;
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
    ({ values, positionals } = parseCommandArgs({ args: rest, allowPositionals: true, options: all }) as Omit<Parsed, 'client'>);
  } catch (error) {
    return usage(context, text, (error as Error).message);
  }
  if (values.help) {
    context.stdout.write(`${text}\n`);
    return 0;
  }
  if (!positionals[0]) return usage(context, text, 'Say what to do.');
  if (!actions.includes(positionals[0])) return usage(context, text, `Unknown command "${positionals[0]}".`);
  const client = adminClient(dataDir, values.url as string | undefined);
  if ('problem' in client) {
    context.stderr.write(`${client.problem}\n`);
    return 1;
  }
  return { client, positionals, values };
}
