import { createDataDirectory, dataPaths } from '../store/data-dir.js';
import { SecretStore } from '../store/secrets.js';
import { UsageError } from './arguments.js';
import { takeDataDir } from './data-dir-option.js';
import type { CommandContext } from './context.js';

export const usage = `Usage:
  hearth secret set NAME      reads the value from standard input (never from the command line)
  hearth secret list          names only
  hearth secret delete NAME
The configuration refers to a secret as secret:NAME. Options: --data-dir DIR.`;

export async function run(argv: string[], context: CommandContext): Promise<number> {
  const { dataDir, rest } = takeDataDir(argv, context.env);
  const [action, name] = rest;
  const paths = dataPaths(dataDir);
  createDataDirectory(paths);
  const secrets = new SecretStore(paths.secrets);
  try {
    if (action === 'set' && name) {
      const value = (await readAll(context.stdin ?? process.stdin)).replace(/\r?\n$/, '');
      if (!value) throw new Error('No value on standard input. Example: printf %s "$KEY" | hearth secret set NAME');
      secrets.set(name, value);
      context.stdout.write(`Stored secret ${name}; refer to it as secret:${name}.\n`);
      return 0;
    }
    if (action === 'list') {
      context.stdout.write(
        secrets
          .names()
          .map((entry) => `${entry}\n`)
          .join(''),
      );
      return 0;
    }
    if (action === 'delete' && name) {
      context.stdout.write(secrets.delete(name) ? `Deleted secret ${name}.\n` : `No secret named ${name}.\n`);
      return 0;
    }
  } catch (error) {
    context.stderr.write(`hearth secret: ${(error as Error).message}\n`);
    return 1;
  }
  throw new UsageError(action ? `Unknown or incomplete command "secret ${rest.join(' ')}".` : 'Say what to do.');
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}
