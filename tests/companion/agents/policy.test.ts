import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentApprovalList, AgentRun, AgentToolCall } from '#shared/api/agents.js';
import type { AgentSettings } from '#shared/api/config.js';
import { matchesToolPattern, toolDecision } from '../../../companion/src/tools/policy.js';
import { startScriptedProvider, type ScriptedProvider } from '../../fixtures/scripted-provider.js';
import { agentDataDir, waitFor } from '../../helpers/agents.js';
import { asOwner, testApp } from '../../helpers/app.js';
import { EVERYTHING } from '../../helpers/mcp.js';
import { untilTrue } from '../../helpers/until.js';

describe('tool patterns and decisions', () => {
  it('matches exact names and globs', () => {
    expect(matchesToolPattern('everything_*', 'everything_echo')).toBe(true);
    expect(matchesToolPattern('everything_*', 'files_echo')).toBe(false);
    expect(matchesToolPattern('*_read_*', 'files_read_text_file')).toBe(true);
    expect(matchesToolPattern('memory_search_?????', 'memory_search_pinned')).toBe(false);
    expect(matchesToolPattern('memory_search_??????', 'memory_search_pinned')).toBe(true);
    expect(matchesToolPattern('shell', 'shell')).toBe(true);
    expect(matchesToolPattern('shell', 'shells')).toBe(false);
    expect(matchesToolPattern('a.b', 'axb')).toBe(false);
  });

  it('an override wins over the class policy, in both directions', () => {
    const agent = {
      tool_policy: { read: 'auto', write: 'ask', exec: 'deny', network: 'ask' },
      tool_overrides: { shell: 'ask', reader: 'deny' },
    } as Pick<AgentSettings, 'tool_policy' | 'tool_overrides'>;
    expect(toolDecision(agent, 'write_file', 'write')).toBe('ask');
    expect(toolDecision(agent, 'shell', 'exec')).toBe('ask');
    expect(toolDecision(agent, 'reader', 'read')).toBe('deny');
    expect(toolDecision(agent, 'other', 'read')).toBe('auto');
    expect(toolDecision(agent, 'other', 'exec')).toBe('deny');
  });
});

/** Four tools of the everything service, one per class (tool_classes overrides the annotations). */
const TOOLS = {
  read: { name: 'everything_echo', arguments: { message: 'matrix' }, ran: 'Echo: matrix' },
  write: { name: 'everything_get-sum', arguments: { a: 2, b: 3 }, ran: '5' },
  exec: { name: 'everything_get-env', arguments: {}, ran: 'HEARTH_MATRIX_MARK' },
  network: { name: 'everything_get-tiny-image', arguments: {}, ran: '[image: image/png, ' },
} as const;
type Kind = keyof typeof TOOLS;
const KINDS = Object.keys(TOOLS) as Kind[];
const names = KINDS.map((kind) => TOOLS[kind].name);
const every = (value: string) => Object.fromEntries(KINDS.map((kind) => [kind, value]));
const overrides = (value: string) => Object.fromEntries(names.map((name) => [name, value]));

describe('the policy matrix: auto / ask / deny × class × override, on a real MCP service', () => {
  let provider: ScriptedProvider;
  let app: Awaited<ReturnType<typeof testApp>>;

  beforeAll(async () => {
    provider = await startScriptedProvider();
    const agent = (id: string, extra: Record<string, unknown>) => ({
      id,
      model: 'script/scripted',
      memory: { enabled: false },
      tools: ['everything_*'],
      ...extra,
    });
    const dataDir = await agentDataDir({
      provider,
      agents: [
        agent('all-auto', { tool_policy: every('auto') }),
        agent('all-ask', { tool_policy: every('ask') }),
        agent('all-deny', { tool_policy: every('deny') }),
        agent('deny-but-allowed', { tool_policy: every('deny'), tool_overrides: overrides('auto') }),
        agent('auto-but-denied', { tool_policy: every('auto'), tool_overrides: overrides('deny') }),
        agent('deny-but-asked', { tool_policy: every('deny'), tool_overrides: overrides('ask') }),
      ],
      sections: {
        mcp_services: [
          {
            name: 'everything',
            transport: 'stdio',
            command: process.execPath,
            args: [EVERYTHING, 'stdio'],
            env: { HEARTH_MATRIX_MARK: '1' },
            tool_classes: { echo: 'read', 'get-sum': 'write', 'get-env': 'exec', 'get-tiny-image': 'network' },
          },
        ],
      },
    });
    app = await testApp({ dataDir });
    await waitFor(() => (app.services.mcp.catalog.get('everything_get-env') ? true : undefined), 30_000, 'the everything service');
  });

  afterAll(async () => {
    await app?.close();
    await provider?.close();
  });

  /** One run calling all four tools; approvals, when asked, are answered `approve` one by one. */
  async function runAll(agentId: string): Promise<{ calls: Record<Kind, AgentToolCall>; offered: string[] }> {
    provider.setScript([{ tool_calls: KINDS.map((kind) => ({ name: TOOLS[kind].name, arguments: TOOLS[kind].arguments })) }, { content: 'done' }]);
    const before = provider.requests.length;
    const started = app.app.inject({ method: 'POST', url: `/agents/${agentId}/run`, payload: { input: 'use every tool' } });
    let settled = false;
    void started.then(() => (settled = true));
    // Approves what waits, again and again, until the run has ended.
    await untilTrue(async () => {
      const pending = (await app.app.inject(asOwner({ method: 'GET', url: '/agents/approvals' }))).json() as AgentApprovalList;
      for (const approval of pending.data)
        await app.app.inject(asOwner({ method: 'POST', url: `/agents/approvals/${approval.id}`, payload: { decision: 'approve' } }));
      return settled;
    }, 'the run to end with every call approved');
    const run = (await started).json() as AgentRun;
    expect(run.status).toBe('completed');
    const calls = Object.fromEntries(KINDS.map((kind, index) => [kind, run.steps[0]!.tool_calls[index]!])) as Record<Kind, AgentToolCall>;
    const offered = (provider.requests[before]!.body.tools ?? []).map((tool: { function: { name: string } }) => tool.function.name).sort();
    return { calls, offered };
  }

  const ran = (call: AgentToolCall, kind: Kind) => !call.is_error && call.output!.includes(TOOLS[kind].ran);

  it.each([
    ['all-auto', 'auto', 'auto', true],
    ['all-ask', 'ask', 'approved', true],
    ['all-deny', 'deny', 'policy_denied', false],
    ['deny-but-allowed', 'auto', 'auto', true],
    ['auto-but-denied', 'deny', 'policy_denied', false],
    ['deny-but-asked', 'ask', 'approved', true],
  ] as const)('%s: every class is %s, decided %s', async (agentId, policy, decision, runs) => {
    const { calls, offered } = await runAll(agentId);
    for (const kind of KINDS) {
      const call = calls[kind];
      expect(call.class, kind).toBe(kind);
      expect(call.policy, kind).toBe(policy);
      expect(call.decision, kind).toBe(decision);
      expect(ran(call, kind), `${kind} ran`).toBe(runs);
      // An approval exactly where the policy asks; the policy's refusal exactly where the call did not run.
      expect(/^appr_/.test(call.approval_id ?? ''), `${kind} approval_id ${call.approval_id}`).toBe(policy === 'ask');
      expect(call.output?.includes(`This agent's policy denies "${TOOLS[kind].name}" (${kind} tool)`) ?? false, `${kind}: ${call.output}`).toBe(!runs);
    }
    // The model is offered exactly the tools it may call (ask included), never the denied ones.
    for (const name of names) expect(offered.includes(name), name).toBe(policy !== 'deny');
  });
});
