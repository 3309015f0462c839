import { describe, expect, it } from 'vitest';
import { send, sharedMemoryApp } from './helpers.js';

const server = sharedMemoryApp();

const valid = {
  agent_id: 'ana',
  conversation_id: 'c1',
  turns: [{ user: 'I adopted a cat named Miso.', assistant: 'Congratulations!' }],
  session_date: '2024-03-02',
  skip_extraction: true,
};

describe('POST /memory/ingest', () => {
  it('stores every turn in one transaction and says what happened', async () => {
    const response = await send(server.app, 'POST', '/memory/ingest', {
      ...valid,
      turns: [...valid.turns, { user: 'And a dog.', assistant: '' }, { user: 'No answer yet' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok', turns_ingested: 3, extraction: 'skipped' });
    const rows = server.services.db.prepare('SELECT user_text, assistant_text, session_date FROM memory_turns WHERE agent_id = ? ORDER BY id').all('ana');
    expect(rows).toEqual([
      { user_text: 'I adopted a cat named Miso.', assistant_text: 'Congratulations!', session_date: '2024-03-02' },
      { user_text: 'And a dog.', assistant_text: '', session_date: '2024-03-02' },
      { user_text: 'No answer yet', assistant_text: '', session_date: '2024-03-02' },
    ]);
    // skip_extraction records no pending signal
    expect(server.services.db.prepare('SELECT COUNT(*) AS n FROM memory_signals').get()).toEqual({ n: 0 });
  });

  it('records pending signals and reports model_unavailable when no memory model is configured (docs/memory.md rule 7)', async () => {
    const response = await send(server.app, 'POST', '/memory/ingest', { ...valid, agent_id: 'bo', skip_extraction: false });
    expect(response.json()).toEqual({ status: 'ok', turns_ingested: 1, extraction: 'model_unavailable' });
    expect(server.services.memory.transcript.pendingCount('bo')).toBe(1);
  });

  it('accepts date-times with and without a zone', async () => {
    for (const session_date of ['2023-05-08T13:56:00', '2023-05-08T13:56:00Z', '2023-05-08T13:56:00.123+02:00', '2023-05-08T13:56']) {
      const response = await send(server.app, 'POST', '/memory/ingest', { ...valid, session_date });
      expect(response.statusCode, session_date).toBe(200);
    }
  });

  const bad: [string, Record<string, unknown>, string][] = [
    ['missing agent_id', { ...valid, agent_id: undefined }, 'agent_id'],
    ['agent_id with a slash', { ...valid, agent_id: 'a/b' }, 'agent_id'],
    ['agent_id too long', { ...valid, agent_id: 'a'.repeat(129) }, 'agent_id'],
    ['missing conversation_id', { ...valid, conversation_id: undefined }, 'conversation_id'],
    ['turns not an array', { ...valid, turns: 'hello' }, 'turns'],
    ['no turns', { ...valid, turns: [] }, 'turns'],
    ['turn without user', { ...valid, turns: [{ assistant: 'x' }] }, 'turns[0].user'],
    ['user not a string', { ...valid, turns: [{ user: 'ok' }, { user: 5 }] }, 'turns[1].user'],
    ['unknown turn field', { ...valid, turns: [{ user: 'x', role: 'user' }] }, 'turns[0].role'],
    ['session_date in words', { ...valid, session_date: 'yesterday' }, 'session_date'],
    ['session_date US style', { ...valid, session_date: '05/08/2023' }, 'session_date'],
    ['impossible month', { ...valid, session_date: '2023-13-01' }, 'session_date'],
    ['impossible day', { ...valid, session_date: '2023-02-30' }, 'session_date'],
    ['impossible hour', { ...valid, session_date: '2023-02-03T25:00' }, 'session_date'],
    ['skip_extraction as a string', { ...valid, skip_extraction: 'yes' }, 'skip_extraction'],
    ['unknown field', { ...valid, skip_extractions: true }, 'skip_extractions'],
  ];
  it.each(bad)('refuses %s with 400 naming the field', async (_name, body, param) => {
    const before = server.services.db.prepare('SELECT COUNT(*) AS n FROM memory_turns').get();
    const response = await send(server.app, 'POST', '/memory/ingest', JSON.parse(JSON.stringify(body)));
    expect(response.statusCode).toBe(400);
    const error = response.json().error;
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(error.message).toContain(param.split('.')[0]!.replace(/\[\d+\]/, ''));
    // nothing half-written
    expect(server.services.db.prepare('SELECT COUNT(*) AS n FROM memory_turns').get()).toEqual(before);
  });

  it('refuses a body that is not JSON', async () => {
    const response = await server.app.inject({
      method: 'POST',
      url: '/memory/ingest',
      headers: { 'content-type': 'application/json' },
      payload: '{"agent_id":',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('invalid_json');
  });
});

describe('POST /memory/delegated (docs/memory.md rule 4)', () => {
  it('records delegated work as its own turn kind', async () => {
    const response = await send(server.app, 'POST', '/memory/delegated', {
      agent_id: 'ana',
      conversation_id: 'task-7',
      task: 'Summarise the report',
      result: 'Done: three findings.',
    });
    expect(response.statusCode).toBe(200);
    const list = await send(server.app, 'GET', '/memory/agents/ana/transcript?conversation_id=task-7');
    expect(list.json().items).toMatchObject([{ kind: 'delegated', user: 'Summarise the report', assistant: 'Done: three findings.', pending: true }]);
  });
});
