import { KeyStore } from '../access/keys.js';
import { HearthError } from '../errors.js';
import { createDataDirectory, dataPaths } from '../store/data-dir.js';
import { openDatabase } from '../store/database.js';
import { ROUTE_SCOPES, type RouteScope } from '#shared/api/access.js';
import { parseCommandArgs, UsageError } from './arguments.js';
import { takeDataDir } from './data-dir-option.js';
import type { CommandContext } from './context.js';
import { command } from '../invocation.js';

export const usage = `Usage:
  hearth keys create --label NAME [--agent ID] [--scope ${ROUTE_SCOPES.join('|')} ...] [--expires-in-days N]
  hearth keys list
  hearth keys revoke KEY_ID
Options: --data-dir DIR (or HEARTH_DATA_DIR). Keys work whether or not the server is running;
a revoked key stops working at once.`;

/** `hearth keys`: manages access keys in the data directory's database. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const { dataDir, rest } = takeDataDir(argv, context.env);
  const [action, ...args] = rest;
  const paths = dataPaths(dataDir);
  createDataDirectory(paths);
  const db = openDatabase(paths.database);
  const keys = new KeyStore(db);
  try {
    if (action === 'create') {
      const { values } = parseCommandArgs({
        args,
        options: { label: { type: 'string' }, agent: { type: 'string' }, scope: { type: 'string', multiple: true }, 'expires-in-days': { type: 'string' } },
      });
      if (!values.label) throw new UsageError('--label is required.');
      const scopes = values.scope?.flatMap((scope) => scope.split(',')) as RouteScope[] | undefined;
      const unknown = scopes?.filter((scope) => !ROUTE_SCOPES.includes(scope));
      if (unknown?.length) throw new UsageError(`Unknown scope ${unknown.join(', ')}.`);
      const days = values['expires-in-days'] ? Number(values['expires-in-days']) : undefined;
      if (days !== undefined && !(days > 0)) throw new UsageError('--expires-in-days must be a positive number.');
      const created = keys.create({ label: values.label, agent: values.agent ?? null, scopes, expiresAt: days ? Date.now() + days * 86_400_000 : null });
      context.stdout.write(`${created.key}\n`);
      context.stderr.write(
        `Created ${created.id} "${created.label}" (scopes: ${created.scopes.join(', ')}${created.agent ? `; agent ${created.agent}` : ''}${created.expires_at ? `; expires ${created.expires_at}` : ''}).\nThis is the only time the key is shown: store it now. Send it as Authorization: Bearer <key>.\n`,
      );
      return 0;
    }
    if (action === 'list') {
      const rows = keys.list();
      if (rows.length === 0) context.stdout.write(`No access keys. Create one with: ${command('keys create --label NAME')}\n`);
      for (const key of rows) {
        const state = key.revoked_at ? 'revoked' : key.expires_at && Date.parse(key.expires_at) <= Date.now() ? 'expired' : 'active';
        context.stdout.write(
          `${key.id}  ${state.padEnd(7)}  ${key.prefix}…  ${key.label}  scopes=${key.scopes.join(',')}${key.agent ? `  agent=${key.agent}` : ''}  last-used=${key.last_used_at ?? 'never'}\n`,
        );
      }
      return 0;
    }
    if (action === 'revoke' && args.length === 1) {
      const revoked = keys.revoke(args[0]!);
      context.stdout.write(`Revoked ${revoked.id} "${revoked.label}".\n`);
      return 0;
    }
    throw new UsageError(action ? `Unknown or incomplete command "keys ${action}".` : 'Say what to do.');
  } catch (error) {
    if (!(error instanceof HearthError)) throw error;
    context.stderr.write(`hearth keys: ${error.message}\n`);
    return 1;
  } finally {
    db.close();
  }
}
