import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { explainDuplicate } from '../config/duplicate-keys.js';
import type { ConfigPlan, ConfigRisk } from '#shared/api/admin-config.js';
import { locateProblems } from '../config/problems.js';
import { adminClient } from './admin-client.js';
import { parseCommandArgs, UsageError } from './arguments.js';
import { takeDataDir } from './data-dir-option.js';
import type { CommandContext } from './context.js';

export const usage = `Usage:
  hearth config export [--format yaml|json]
  hearth config plan FILE [--prune]
  hearth config apply FILE [--prune] [--yes]
Talks to the running server (found through the data directory, or --url http://127.0.0.1:PORT).
FILE is YAML or JSON. --prune deletes what FILE does not list; --yes confirms high-risk changes.
Exit codes: 0 done, 1 invalid or failed, 2 usage, 3 high-risk change not confirmed.`;

/** `hearth config`: the admin config routes with readable output and exit codes. */
export async function run(argv: string[], context: CommandContext): Promise<number> {
  const { dataDir, rest } = takeDataDir(argv, context.env);
  const { values, positionals } = parseCommandArgs({
    args: rest,
    allowPositionals: true,
    options: { prune: { type: 'boolean' }, yes: { type: 'boolean' }, format: { type: 'string' }, url: { type: 'string' } },
  });
  const [action, file] = positionals;
  const client = adminClient(dataDir, values.url);
  if ('problem' in client) {
    context.stderr.write(`${client.problem}\n`);
    return 1;
  }
  if (action === 'export') {
    const response = await client.fetch(`/admin/config/export?format=${values.format === 'json' ? 'json' : 'yaml'}`);
    if (!response.ok) return failure(context, await response.json());
    context.stdout.write(await response.text());
    return 0;
  }
  if ((action === 'plan' || action === 'apply') && file) {
    let document: unknown;
    let text = '';
    try {
      text = readFileSync(file, 'utf8');
      document = parse(text);
    } catch (error) {
      context.stderr.write(`Cannot read ${file}: ${explainDuplicate(text, error) ?? (error as Error).message}\n`);
      return 1;
    }
    const body = { document, prune: values.prune ?? false, ...(action === 'apply' ? { confirm_high_risk: values.yes ?? false } : {}) };
    const response = await client.fetch(`/admin/config/${action}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, unknown>;
    if (!response.ok) return failure(context, answer, text);
    describe(context, answer as unknown as ConfigPlan);
    context.stdout.write(action === 'apply' ? 'Applied.\n' : 'Nothing was changed (plan only).\n');
    return 0;
  }
  throw new UsageError(action ? `Unknown or incomplete command "config ${action}".` : 'Say what to do.');
}

function describe(context: CommandContext, plan: ConfigPlan): void {
  for (const warning of plan.warnings) context.stderr.write(`warning: ${warning}\n`);
  if (plan.changes.length === 0) context.stdout.write('No changes.\n');
  for (const change of plan.changes) {
    const target = change.target === change.section ? change.section : `${change.section} "${change.target}"`;
    context.stdout.write(`  ${change.action.padEnd(6)} ${target}${change.fields.length ? `: ${change.fields.join(', ')}` : ''}\n`);
  }
  for (const risk of plan.risks) context.stdout.write(`  HIGH RISK ${risk.code} (${risk.path}): ${risk.message}\n`);
  if (plan.restart_required.length) context.stdout.write(`  Takes effect after a restart: ${plan.restart_required.join(', ')}\n`);
  if (plan.reload_required.length)
    context.stdout.write(`  Takes effect when the model is loaded again (it keeps its old settings until then): ${plan.reload_required.join(', ')}\n`);
}

/** The server's refusal; problems are shown at their line of FILE (`text`) when it has them. */
function failure(context: CommandContext, answer: unknown, text?: string): number {
  const error = (answer as { error?: { code: string; message: string; problems?: { path: string; message: string }[]; risks?: ConfigRisk[] } }).error;
  if (!error) {
    context.stderr.write('The server answered with an unexpected body.\n');
    return 1;
  }
  if (error.problems) {
    const lines = error.problems.map((problem) => `${problem.path}: ${problem.message}`);
    for (const line of text === undefined ? lines : locateProblems(text, lines)) context.stderr.write(`  ${line}\n`);
  }
  if (error.code === 'confirmation_required') {
    for (const risk of error.risks ?? []) context.stderr.write(`  HIGH RISK ${risk.code} (${risk.path}): ${risk.message}\n`);
    context.stderr.write('Not applied. Review the risks above and run again with --yes to confirm.\n');
    return 3;
  }
  context.stderr.write(`${error.problems ? 'Not applied: the document is invalid.' : error.message}\n`);
  return 1;
}
