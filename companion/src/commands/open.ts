import type { SignInLink } from '#shared/api/admin.js';
import { adminClient } from './admin-client.js';
import { parseCommandArgs } from './arguments.js';
import { takeDataDir } from './data-dir-option.js';
import type { CommandContext } from './context.js';

export const usage = `Usage: hearth open [--data-dir DIR] [--url http://127.0.0.1:PORT]
Prints a one-time link that signs the app in on this machine (its admin screens: server,
models). Open it in the browser you use for Hearth; it works once, for 15 minutes.
Talks to the running server, found through the data directory (or --url).`;

/** `hearth open`: a fresh one-time sign-in link for the app, made with the admin credential. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const { dataDir, rest } = takeDataDir(argv, context.env);
  const { values } = parseCommandArgs({ args: rest, options: { url: { type: 'string' } }, strict: true, allowPositionals: false });
  const client = adminClient(dataDir, values.url);
  if ('problem' in client) {
    context.stderr.write(`${client.problem}\n`);
    return 1;
  }
  let response: Response;
  try {
    response = await client.fetch('/admin/session/links', { method: 'POST' });
  } catch (error) {
    context.stderr.write(`The server at ${client.base} did not answer: ${(error as Error).message}\n`);
    return 1;
  }
  const body = (await response.json()) as SignInLink & { error?: { message: string } };
  if (!response.ok) {
    context.stderr.write(`${body.error?.message ?? `The server answered ${response.status}.`}\n`);
    return 1;
  }
  // Printed, not handed to a browser command: a command line is visible to every user of the machine.
  context.stdout.write(`${body.url}\n`);
  context.stderr.write(`Open this link in your browser to sign the app in (one-time, until ${body.expires_at}).\n`);
  return 0;
}
