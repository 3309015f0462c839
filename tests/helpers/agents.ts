import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentRunEvent } from '#shared/api/agents.js';
import type { ScriptedProvider } from '../fixtures/scripted-provider.js';
import { newDataDir } from './server.js';
import { until } from './until.js';

/** A data directory whose config.yaml holds these agents, the scripted provider as `script`, and any other sections. */
export async function agentDataDir(options: {
  agents: Record<string, unknown>[];
  provider?: ScriptedProvider;
  sections?: Record<string, unknown>;
  withModel?: boolean;
}): Promise<string> {
  const dataDir = await newDataDir(options.withModel ?? false);
  const document = {
    version: 1,
    ...(options.provider ? { providers: [{ name: 'script', base_url: options.provider.baseUrl, models: ['scripted'] }] } : {}),
    agents: options.agents,
    ...options.sections,
  };
  // JSON is YAML: the document is written as it is.
  writeFileSync(join(dataDir, 'config.yaml'), JSON.stringify(document, null, 2));
  return dataDir;
}

/** The events of an SSE body: `event:` names, `id:` and parsed `data:`. */
export function parseEvents(text: string): { event: string; id: string | undefined; data: AgentRunEvent }[] {
  return text
    .split('\n\n')
    .filter((block) => block.includes('data:'))
    .map((block) => {
      const lines = block.split('\n');
      const field = (name: string) =>
        lines
          .find((line) => line.startsWith(`${name}:`))
          ?.slice(name.length + 1)
          .trim();
      return { event: field('event') ?? '', id: field('id'), data: JSON.parse(field('data') ?? 'null') as AgentRunEvent };
    });
}

/** Polls (until() of helpers/until.ts) until `check` returns a value (not undefined), or fails after timeoutMs. */
export async function waitFor<T>(check: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000, what = 'the condition'): Promise<T> {
  return until(check, what, timeoutMs);
}

/** The events of a run whose one tool call waits for approval, is approved and runs, in order. */
export const APPROVED_CALL_EVENTS = [
  'run.created',
  'tool_call.created',
  'tool_call.approval_required',
  'tool_call.completed',
  'message.delta',
  'run.completed',
] as const;
