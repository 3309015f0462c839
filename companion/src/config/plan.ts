import { statSync } from 'node:fs';
import type { ConfigDocument, ToolClass } from '#shared/api/config.js';
import type { ConfigChange, ConfigPlan, ConfigProblem, ConfigRisk } from '#shared/api/admin-config.js';
import { isLoopbackBind } from '../access/hosts.js';
import { command } from '../invocation.js';
import { checkDocument } from './document.js';
import { renameLegacyKeys } from './legacy-keys.js';
import { isObject } from '../json.js';
import { lockoutProblems } from './lockout.js';
import { changedFields, desiredDocument, NAMED_LISTS } from './merge.js';
import { missingModelWarnings, modelReferences } from './model-references.js';
import { reloadRequired } from './model-overrides.js';
import { findRisks } from './risks.js';
import { effectOf } from './settings-table.js';

export interface PlanContext {
  current: ConfigDocument;
  /** Whether a `secret:NAME` / `env:NAME` reference resolves. */
  resolves(reference: string): boolean;
  /** Local model ids; provider models are `<provider>/<model>` of a provider in the document itself. */
  localModels: Set<string>;
  /** Access keys that are active now. */
  activeKeys: number;
  /** The class of a tool in the live catalog (built-in or a connected service's). */
  toolClass?(name: string): ToolClass | undefined;
  /** The address the server is listening on now (it may differ from server.host until a restart); undefined when not listening. */
  listening?: string;
  /** Local models loaded now: a change to their load settings applies when they are loaded again. */
  loaded?: string[];
}

/** Validates a change all-or-nothing and describes it; changes nothing. */
export function planChange(
  incoming: unknown,
  prune: boolean,
  context: PlanContext,
): { plan?: ConfigPlan & { document: ConfigDocument }; problems: ConfigProblem[] } {
  if (!isObject(incoming)) return { problems: [{ path: 'document', message: 'must be an object (the configuration document)' }] };
  if (incoming.version !== 1) return { problems: [{ path: 'version', message: 'must be 1' }] };
  const renamed = structuredClone(incoming);
  const warnings = renameLegacyKeys(renamed);
  const desired = desiredDocument(context.current, renamed, prune);
  const { document, problems: invalid } = checkDocument(desired);
  // Every problem at once: reference checks run on the desired document even when its shape is wrong.
  const problems = [
    ...invalid.map(splitProblem),
    ...references(desired, context),
    ...(document ? [...exposure(document, context), ...workspaces(document), ...lockoutProblems(context.current, document, context.activeKeys)] : []),
  ];
  if (!document || problems.length > 0) return { problems };
  const changes = diff(context.current, document);
  const risks: ConfigRisk[] = findRisks(context.current, document, changes, context.toolClass);
  // What each change needs comes from the settings table; a path it does not cover is taken to need a restart.
  const restartRequired = changedPaths(changes).filter((path) => (effectOf(path) ?? 'restart') === 'restart');
  const missing = missingModelWarnings(document as unknown as Record<string, unknown>, context.localModels);
  const reload = reloadRequired(context.current, document, context.loaded ?? []);
  return {
    plan: { valid: true, changes, risks, restart_required: restartRequired, reload_required: reload, warnings: [...warnings, ...missing], document },
    problems: [],
  };
}

/** The setting paths a change touches: `server.limits.admin_body_kb`, or a named list's section (`providers`). */
export function changedPaths(changes: ConfigChange[]): string[] {
  const paths = changes.flatMap((change) => (NAMED_LISTS[change.section] ? [change.section] : change.fields.map((field) => `${change.section}.${field}`)));
  return [...new Set(paths)];
}

function splitProblem(text: string): ConfigProblem {
  const colon = text.indexOf(': ');
  return colon > 0 ? { path: text.slice(0, colon), message: text.slice(colon + 2) } : { path: 'document', message: text };
}

function diff(before: ConfigDocument, after: ConfigDocument): ConfigChange[] {
  const changes: ConfigChange[] = [];
  const sections = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((section) => section !== 'version');
  for (const section of sections) {
    const key = NAMED_LISTS[section];
    const old = (before as unknown as Record<string, unknown>)[section];
    const next = (after as unknown as Record<string, unknown>)[section];
    if (key) {
      const oldItems = new Map(((old as Record<string, unknown>[]) ?? []).map((item) => [String(item[key]), item]));
      const newItems = new Map(((next as Record<string, unknown>[]) ?? []).map((item) => [String(item[key]), item]));
      for (const [name, item] of newItems) {
        const previous = oldItems.get(name);
        if (!previous) changes.push({ section, target: name, action: 'create', fields: Object.keys(item).sort() });
        else {
          const fields = changedFields(previous, item);
          if (fields.length > 0) changes.push({ section, target: name, action: 'update', fields });
        }
      }
      for (const name of oldItems.keys()) if (!newItems.has(name)) changes.push({ section, target: name, action: 'delete', fields: [] });
    } else {
      const fields = changedFields(old, next);
      if (fields.length > 0) changes.push({ section, target: section, action: 'update', fields });
    }
  }
  return changes;
}

/** Every secret/env reference must resolve, and a provider model must name a provider of the document. */
function references(document: Record<string, unknown>, context: PlanContext): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const walk = (value: unknown, path: string) => {
    if (typeof value === 'string' && /^(secret|env):[A-Za-z_][A-Za-z0-9_]*$/.test(value) && !context.resolves(value)) {
      const [kind, name] = value.split(':');
      problems.push({
        path,
        message: kind === 'secret' ? `the secret ${name} is not set (${command(`secret set ${name}`)})` : `the environment variable ${name} is not set`,
      });
    } else if (Array.isArray(value)) value.forEach((item, index) => walk(item, `${path}[${index}]`));
    else if (isObject(value)) for (const [key, item] of Object.entries(value)) walk(item, path ? `${path}.${key}` : key);
  };
  walk(document, '');
  // A provider model needs its provider in the document; a local model may still be added (a warning, above).
  const providers = new Set(
    (Array.isArray(document.providers) ? (document.providers as unknown[]) : []).map((provider) => (isObject(provider) ? provider.name : undefined)),
  );
  for (const { path, model } of modelReferences(document)) {
    const slash = model.indexOf('/');
    if (slash >= 0 && !providers.has(model.slice(0, slash)))
      problems.push({
        path,
        message: `names the model "${model}", but no provider in this document is called "${model.slice(0, slash)}" (provider models are <provider>/<model>)`,
      });
  }
  return problems;
}

/** Beyond loopback, auth stays on with a key to use: judged on the document's host and on the address actually bound. */
function exposure(document: ConfigDocument, context: PlanContext): ConfigProblem[] {
  const exposed = [document.server.host, context.listening].find((host) => host !== undefined && !isLoopbackBind(host));
  if (exposed === undefined) return [];
  const where = exposed === document.server.host ? `to listen on ${exposed}` : `while the server listens on ${exposed}`;
  if (!document.server.auth.required) return [{ path: 'server.auth.required', message: `must be true ${where}, beyond loopback` }];
  if (context.activeKeys === 0)
    return [{ path: 'server.host', message: `listening beyond loopback (${exposed}) needs at least one access key first (${command('keys create')})` }];
  return [];
}

/** An agent's workspace must be an existing folder: its file and shell tools are confined to it. */
function workspaces(document: ConfigDocument): ConfigProblem[] {
  return document.agents.flatMap((agent, index) => {
    if (!agent.workspace) return [];
    let folder = false;
    try {
      folder = statSync(agent.workspace).isDirectory();
    } catch {
      // Missing or unreadable: reported below.
    }
    return folder ? [] : [{ path: `agents[${index}].workspace`, message: `${agent.workspace} is not an existing folder` }];
  });
}
