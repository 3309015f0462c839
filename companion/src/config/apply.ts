import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import type { ConfigDocument, ToolClass } from '#shared/api/config.js';
import type { ApplyResult, ConfigPlan, ConfigProblem, ConfigRisk } from '#shared/api/admin-config.js';
import { HearthError } from '../errors.js';
import type { Db } from '../store/database.js';
import { writeFileAtomic } from '../store/files.js';
import { editConfigText } from './edit-text.js';
import { isObject } from '../json.js';
import { planChange, type PlanContext } from './plan.js';
import { configSchema } from './schema.js';

/** What planning and applying need of the running server, and nothing more. */
export interface ConfigTarget {
  /** The configuration in force. */
  current(): ConfigDocument;
  /** The configuration file on disk. */
  path: string;
  /** Where every attempt is recorded (config_audit). */
  db: Db;
  /** Whether a secret:/env: reference resolves to a value. */
  resolves(reference: string): boolean;
  localModelIds(): Promise<string[]>;
  activeKeys(): number;
  /** The class of a tool in the live catalog. */
  toolClass?(name: string): ToolClass | undefined;
  /** The address the server listens on now, if it listens. */
  listening(): string | undefined;
  /** Ids of the local models loaded now. */
  loadedModels?(): string[];
  /** Puts a validated document in force; throws when a subsystem refuses it. */
  reconfigure(next: ConfigDocument): void;
}

async function planContext(target: ConfigTarget): Promise<PlanContext> {
  return {
    current: target.current(),
    resolves: target.resolves,
    localModels: new Set(await target.localModelIds()),
    activeKeys: target.activeKeys(),
    toolClass: target.toolClass,
    listening: target.listening(),
    loaded: target.loadedModels?.() ?? [],
  };
}

export async function plan(target: ConfigTarget, document: unknown, prune: boolean): Promise<ConfigPlan> {
  const result = planChange(document, prune, await planContext(target));
  if (!result.plan) throw invalid(result.problems);
  const { document: _document, ...plan } = result.plan;
  return plan;
}

/**
 * Applies a change all-or-nothing: the file is edited, written to a temporary and renamed, the running
 * subsystems are reconfigured, and if that fails the previous file and configuration come back.
 * Every attempt, refused or applied, is recorded in the audit log.
 */
export async function apply(target: ConfigTarget, request: { document: unknown; prune: boolean; confirm: boolean; peer: string }): Promise<ApplyResult> {
  const result = planChange(request.document, request.prune, await planContext(target));
  if (!result.plan) {
    audit(target, request, 'invalid', [], []);
    throw invalid(result.problems);
  }
  const { document, ...plan } = result.plan;
  if (plan.risks.length > 0 && !request.confirm) {
    audit(target, request, 'refused', plan.changes, plan.risks);
    throw new HearthError(
      'confirmation_required',
      `This change is high-risk (${plan.risks.map((risk) => risk.code).join(', ')}). Review the risks and send confirm_high_risk: true to apply it.`,
      { details: { risks: plan.risks, changes: plan.changes } },
    );
  }
  const previous: ConfigDocument = target.current();
  const previousText = readFileSync(target.path, 'utf8');
  // The user's file is edited, not rewritten: comments and layout stay, defaults are not spelled out.
  writeFileAtomic(target.path, editConfigText(previousText, document) ?? serialize(document));
  try {
    target.reconfigure(document);
  } catch (error) {
    writeFileAtomic(target.path, previousText);
    target.reconfigure(previous);
    audit(target, request, 'failed', plan.changes, plan.risks);
    throw new HearthError('internal_error', 'The change could not be put in force; the previous configuration is back in place.', { cause: error });
  }
  audit(target, request, 'applied', plan.changes, plan.risks);
  return { applied: true, ...plan };
}

export function serialize(document: ConfigDocument, format: 'yaml' | 'json' = 'yaml'): string {
  const ordered = inSchemaOrder(document, configSchema);
  if (format === 'json') return `${JSON.stringify(ordered, null, 2)}\n`;
  return `# Hearth configuration (version 1). Secrets appear only as secret:NAME or env:NAME references.\n${stringify(ordered)}`;
}

/** Keys in the order the schema lists them, so an export reads the same whatever order config.yaml uses. */
function inSchemaOrder(value: unknown, schema: object): unknown {
  const { properties = {}, items = {} } = schema as { properties?: Record<string, object>; items?: object };
  if (Array.isArray(value)) return value.map((item) => inSchemaOrder(item, items));
  if (!isObject(value)) return value;
  const keys = [...Object.keys(properties).filter((key) => key in value), ...Object.keys(value).filter((key) => !(key in properties))];
  return Object.fromEntries(keys.map((key) => [key, inSchemaOrder(value[key], properties[key] ?? {})]));
}

function invalid(problems: ConfigProblem[]): HearthError {
  const first = problems[0]!;
  const summary = problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ');
  return new HearthError('config_invalid', `The configuration document has ${problems.length} problem${problems.length === 1 ? '' : 's'}: ${summary}`, {
    param: `document.${first.path}`,
    details: { problems },
  });
}

function audit(
  target: ConfigTarget,
  request: { prune: boolean; confirm: boolean; peer: string },
  outcome: string,
  changes: unknown[],
  risks: ConfigRisk[],
): void {
  target.db
    .prepare('INSERT INTO config_audit (at, peer, prune, confirmed, outcome, changes_json, risks_json) VALUES (?, ?, ?, ?, ?, ?, ?)')
    .run(Date.now(), request.peer, request.prune ? 1 : 0, request.confirm ? 1 : 0, outcome, JSON.stringify(changes), JSON.stringify(risks));
}
