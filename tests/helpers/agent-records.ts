import type { AgentRecord, AgentRun } from '#shared/api/agents.js';

/** The local `helper` agent as `GET /agents` lists it: the `tiny` model, no tools, the default policy, with `extra` on top. */
export const agentRecord = (extra: Partial<AgentRecord> = {}): AgentRecord => ({
  id: 'helper',
  object: 'agent',
  source: 'local',
  name: 'Helper',
  description: null,
  instructions: null,
  model: 'tiny',
  tools: [],
  tool_policy: { read: 'auto', write: 'ask', exec: 'deny', network: 'ask' },
  tool_overrides: {},
  tool_choice: 'auto',
  memory: { enabled: true, budget_tokens: null },
  workspace: null,
  max_steps: 30,
  temperature: null,
  max_tokens: null,
  ...extra,
});

/** A run of the `helper` agent as the store holds one that just started (one user message, no steps yet), with `extra` on top. */
export const agentRun = (id: string, extra: Partial<AgentRun> = {}): AgentRun => ({
  id,
  object: 'agent.run',
  agent_id: 'helper',
  conversation_id: 'conv_1',
  model: 'tiny',
  status: 'running',
  input: [{ role: 'user', content: 'hi' }],
  output_text: '',
  steps: [],
  usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
  created_at: 1,
  completed_at: null,
  ...extra,
});
