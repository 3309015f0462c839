import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun } from '#shared/api/agents.js';
import { startScriptedProvider, type ScriptedProvider } from '../../fixtures/scripted-provider.js';
import { agentDataDir, parseEvents } from '../../helpers/agents.js';
import { asOwner, testApp } from '../../helpers/app.js';

let provider: ScriptedProvider;
let app: Awaited<ReturnType<typeof testApp>>;

beforeAll(async () => {
  provider = await startScriptedProvider();
  const dataDir = await agentDataDir({
    provider,
    withModel: true,
    agents: [
      { id: 'keeper', model: 'script/scripted', instructions: 'Help.', tools: ['memory_*'], memory: { enabled: true, budget_tokens: 200 } },
      { id: 'forgetful', model: 'script/scripted', memory: { enabled: false } },
      {
        id: 'builder',
        model: 'script/scripted',
        tools: ['write_file', 'edit_file', 'shell', 'read_file', 'current_time'],
        workspace: mkdtempSync(join(tmpdir(), 'hearth-builder-')),
        tool_policy: { read: 'auto', write: 'auto', exec: 'auto', network: 'auto' },
      },
    ],
  });
  app = await testApp({ dataDir });
  await app.services.memory.ingest({
    agentId: 'keeper',
    conversationId: 'earlier',
    turns: [{ user: 'Remember: my secret word is pumpkin.', assistant: 'I will remember pumpkin.' }],
    skipExtraction: true,
  });
  await app.services.memory.ingest({
    agentId: 'forgetful',
    conversationId: 'earlier',
    turns: [{ user: 'Remember: my secret word is turnip.', assistant: 'Turnip it is.' }],
    skipExtraction: true,
  });
});

afterAll(async () => {
  await app?.close();
  await provider?.close();
});

const search = async (agentId: string, query: string) =>
  (await app.app.inject({ method: 'POST', url: '/memory/search', payload: { agent_id: agentId, query, scope: 'transcript' } })).json().items as {
    text: string;
  }[];
/** An 8×8 PNG, base64. */
const png = 'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAMAAADz0U65AAAAA1BMVEXAMCDS/b2hAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAADElEQVQImWNgoA4AAABIAAF7pRHIAAAAAElFTkSuQmCC';
const chat = (headers: Record<string, string>, payload: Record<string, unknown>) =>
  app.app.inject({ method: 'POST', url: '/v1/chat/completions', headers, payload });

describe('memory in agent runs', () => {
  it('recalls the agent’s memory into a run, within its budget, and buffers the run into memory', async () => {
    provider.setScript([{ content: 'Your secret word is pumpkin.' }]);
    const run = (await app.app.inject({ method: 'POST', url: '/agents/keeper/run', payload: { input: 'What is my secret word?' } })).json() as AgentRun;
    expect(run.status).toBe('completed');
    const system = provider.requests.at(-1)!.body.messages[0];
    expect(system.role).toBe('system');
    expect(system.content).toMatch(/^Help\.\n\nRecalled from your memory of earlier conversations/);
    expect(system.content).toContain('my secret word is pumpkin');
    const recalled = system.content.slice(system.content.indexOf('\n', 'Help.\n\n'.length) + 1);
    expect(Math.ceil(recalled.length / 4)).toBeLessThanOrEqual(200);
    // The run's memory tools are offered, the memory of another agent is not recalled.
    expect(provider.requests.at(-1)!.body.tools.map((tool: { function: { name: string } }) => tool.function.name)).toEqual([
      'memory_search_pinned',
      'memory_search_episodes',
      'memory_search_transcript',
    ]);
    expect(system.content).not.toContain('turnip');
    const found = await search('keeper', 'What is my secret word');
    expect(found.some((item) => item.text.includes('Your secret word is pumpkin.'))).toBe(true);
  });

  it('a memory tool call reaches only the running agent’s memory', async () => {
    provider.setScript([{ tool_calls: [{ name: 'memory_search_transcript', arguments: { query: 'secret word' } }] }, { content: 'ok' }]);
    const run = (await app.app.inject({ method: 'POST', url: '/agents/keeper/run', payload: { input: 'search yourself' } })).json() as AgentRun;
    const output = run.steps[0]!.tool_calls[0]!.output!;
    expect(output).toContain('pumpkin');
    expect(output).not.toContain('turnip');
  });

  it('a run given earlier turns as its input recalls and remembers only its own turn, its last user message', async () => {
    // A client that starts a new conversation from a history it kept (an edited or shortened chat) sends
    // the earlier turns as input: they are context for the model, not a new turn to remember.
    provider.setScript([{ content: 'Ravens are clever.' }]);
    const input = [
      { role: 'user', content: 'Tell me about otters.' },
      { role: 'assistant', content: 'Otters hold hands.' },
      { role: 'user', content: 'And ravens?' },
    ];
    const run = (await app.app.inject({ method: 'POST', url: '/agents/keeper/run', payload: { input } })).json() as AgentRun;
    expect(run.status).toBe('completed');
    expect(provider.requests.at(-1)!.body.messages.slice(1)).toEqual(input);
    const turns = (await app.app.inject({ method: 'GET', url: '/memory/agents/keeper/transcript' })).json().items as { user: string; assistant: string }[];
    const remembered = turns.find((turn) => turn.assistant === 'Ravens are clever.');
    expect(remembered?.user).toBe('And ravens?');
  });

  it('an agent with memory off gets nothing recalled and buffers nothing', async () => {
    provider.setScript([{ content: 'I do not know.' }]);
    await app.app.inject({ method: 'POST', url: '/agents/forgetful/run', payload: { input: 'What is my secret word, forgetful?' } });
    expect(provider.requests.at(-1)!.body.messages).toEqual([{ role: 'user', content: 'What is my secret word, forgetful?' }]);
    expect((await search('forgetful', 'forgetful')).length).toBe(0);
  });
  it('remembers a run whose question holds an image with [image] in its place, never the bytes', async () => {
    provider.setScript([{ content: 'That is an otter.' }]);
    const input = [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
          { type: 'text', text: 'Which animal swims in this river?' },
        ],
      },
    ];
    const run = (await app.app.inject({ method: 'POST', url: '/agents/keeper/run', payload: { input } })).json() as AgentRun;
    expect(run.status).toBe('completed');
    const remembered = (await search('keeper', 'animal swims river')).map((item) => item.text).join('\n');
    expect(remembered).toContain('[image] Which animal swims in this river?');
    expect(remembered).not.toContain(png.slice(0, 24));
  });
});

describe('X-Service-Agent-Id on the raw routes', () => {
  it('never injects memory or tools into a provider request, and records the exchange in the agent’s conversation and memory', async () => {
    provider.setScript([{ content: 'Attributed answer about lanterns.' }]);
    const messages = [{ role: 'user', content: 'Tell me about lanterns, keeper.' }];
    const response = await chat({ 'x-service-agent-id': 'keeper' }, { model: 'script/scripted', messages });
    expect(response.statusCode).toBe(200);
    expect(response.json().choices[0].message.content).toBe('Attributed answer about lanterns.');
    const forwarded = provider.requests.at(-1)!.body;
    expect(forwarded.messages).toEqual(messages);
    expect(forwarded.tools).toBeUndefined();
    const conversation = response.headers['x-service-conversation-id'] as string;
    expect(conversation).toMatch(/^conv_/);
    const found = await search('keeper', 'lanterns');
    expect(found.map((item) => item.text).join('\n')).toContain('Attributed answer about lanterns.');

    // A run in the same conversation continues from the attributed exchange.
    provider.setScript([{ content: 'As I said: lanterns.' }]);
    await app.app.inject({ method: 'POST', url: '/agents/keeper/run', payload: { input: 'And again?', conversation_id: conversation } });
    const history = provider.requests.at(-1)!.body.messages.slice(1);
    expect(history).toEqual([
      { role: 'user', content: 'Tell me about lanterns, keeper.' },
      { role: 'assistant', content: 'Attributed answer about lanterns.' },
      { role: 'user', content: 'And again?' },
    ]);
  });

  it('keeps a given conversation id, streams unchanged, and records the streamed text', async () => {
    provider.setScript([{ content: 'Streamed words about kites.' }]);
    const response = await chat(
      { 'x-service-agent-id': 'keeper', 'x-service-conversation-id': 'kite-talk' },
      { model: 'script/scripted', stream: true, messages: [{ role: 'user', content: 'kites?' }] },
    );
    expect(response.headers['x-service-conversation-id']).toBe('kite-talk');
    expect(response.body).toContain('data: [DONE]');
    const found = await search('keeper', 'kites');
    expect(found.map((item) => item.text).join('\n')).toContain('Streamed words about kites.');
  });

  it('works for local models on both protocols', async () => {
    const completion = await chat({ 'x-service-agent-id': 'keeper' }, { model: 'tiny', max_tokens: 4, messages: [{ role: 'user', content: 'quokka local' }] });
    expect(completion.statusCode).toBe(200);
    const responses = await app.app.inject({
      method: 'POST',
      url: '/v1/responses',
      headers: { 'x-service-agent-id': 'keeper', 'x-service-conversation-id': 'responses-talk' },
      payload: { model: 'tiny', input: 'wombat responses', max_output_tokens: 4, stream: true },
    });
    expect(responses.headers['x-service-conversation-id']).toBe('responses-talk');
    // The tiny model never stops by itself: the answer is cut at max_output_tokens.
    expect(parseEvents(responses.body).at(-1)!.event).toBe('response.incomplete');
    expect((await search('keeper', 'quokka')).length).toBeGreaterThan(0);
    expect((await search('keeper', 'wombat')).length).toBeGreaterThan(0);
  });

  it('keeps an image of the question as [image] in the conversation and memory, never its bytes', async () => {
    provider.setScript([{ content: 'A rust-red lantern.' }]);
    const content = [
      { type: 'text', text: 'Which colour is this heron?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
    ];
    const response = await chat({ 'x-service-agent-id': 'keeper' }, { model: 'script/scripted', messages: [{ role: 'user', content }] });
    expect(response.statusCode).toBe(200);
    const remembered = (await search('keeper', 'colour heron')).map((item) => item.text).join('\n');
    expect(remembered).toContain('Which colour is this heron? [image]');
    expect(remembered).not.toContain(png.slice(0, 24));

    // The agent's conversation goes on from the words and the placeholder.
    provider.setScript([{ content: 'Still red.' }]);
    const conversation = response.headers['x-service-conversation-id'] as string;
    await app.app.inject({ method: 'POST', url: '/agents/keeper/run', payload: { input: 'And now?', conversation_id: conversation } });
    expect(provider.requests.at(-1)!.body.messages.slice(1, 3)).toEqual([
      { role: 'user', content: 'Which colour is this heron? [image]' },
      { role: 'assistant', content: 'A rust-red lantern.' },
    ]);
  });

  it('an unknown agent is 400 agent_not_found; a key for another agent is 403; nothing is recorded', async () => {
    const before = provider.requests.length;
    const unknown = await chat({ 'x-service-agent-id': 'nobody' }, { model: 'script/scripted', messages: [{ role: 'user', content: 'x' }] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().error).toMatchObject({ code: 'agent_not_found', param: 'X-Service-Agent-Id' });
    const { key } = app.services.keys.create({ label: 'forgetful only', agent: 'forgetful', scopes: ['inference'] });
    const other = await chat(
      { 'x-service-agent-id': 'keeper', authorization: `Bearer ${key}` },
      { model: 'script/scripted', messages: [{ role: 'user', content: 'x' }] },
    );
    expect(other.statusCode).toBe(403);
    expect(provider.requests.length).toBe(before);
  });
});

describe('host-only tools and external callers', () => {
  it('are never listed or callable through the bridge, whatever the agent’s policy', async () => {
    const { key } = app.services.keys.create({ label: 'builder tools', agent: 'builder', scopes: ['tools'] });
    const auth = { authorization: `Bearer ${key}` };
    for (const headers of [auth, {}]) {
      const tools = (await app.app.inject({ method: 'GET', url: '/mcp/tools', headers })).json().tools as { name: string }[];
      for (const name of ['write_file', 'edit_file', 'shell', 'read_file', 'current_time', 'memory_pin'])
        expect(tools.map((tool) => tool.name)).not.toContain(name);
      for (const name of ['write_file', 'shell', 'read_file']) {
        const call = await app.app.inject({
          method: 'POST',
          url: '/mcp/call',
          headers,
          payload: { name, arguments: { path: 'x', content: 'y', command: 'id' } },
        });
        expect(call.statusCode).toBe(404);
        expect(call.json().error.code).toBe('tool_not_found');
      }
    }
  });

  it('the owner’s full catalog lists them with their class, loopback only', async () => {
    const catalog = (await app.app.inject(asOwner({ method: 'GET', url: '/admin/tools' }))).json().data as {
      name: string;
      class: string;
      host_only: boolean;
    }[];
    expect(catalog.find((tool) => tool.name === 'shell')).toMatchObject({ class: 'exec', host_only: true, service: null });
    expect(catalog.find((tool) => tool.name === 'memory_pin')).toMatchObject({ class: 'write', host_only: false });
    expect((await app.app.inject(asOwner({ method: 'GET', url: '/admin/tools', remoteAddress: '10.0.0.9' }))).statusCode).toBe(403);
  });
});
