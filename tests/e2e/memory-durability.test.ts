import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';

let server: RunningServer | undefined;
afterEach(async () => {
  await server?.stop('SIGKILL');
  server = undefined;
});

async function post(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('memory durability', () => {
  it('finds every acknowledged turn after the process is killed with SIGKILL right after ingest answers', async () => {
    server = await startServer({ withModel: false });
    const dataDir = server.dataDir;
    const acknowledged: string[] = [];
    // Several ingests, the last one answered just before the kill, with no pause in between.
    for (let batch = 0; batch < 5; batch++) {
      const turns = Array.from({ length: 40 }, (_, index) => ({
        user: `batch ${batch} turn ${index} remembers the blue door`,
        assistant: `ok ${batch}.${index}`,
      }));
      const response = await post(`${server.url}/memory/ingest`, {
        agent_id: 'durable',
        conversation_id: `c${batch}`,
        turns,
        session_date: '2024-06-01',
        skip_extraction: batch % 2 === 0,
      });
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({ status: 'ok', turns_ingested: 40 });
      acknowledged.push(...turns.map((turn) => turn.user));
    }
    server.process.kill('SIGKILL');
    await server.stop('SIGKILL');

    server = await startServer({ dataDir, withModel: false });
    const seen: string[] = [];
    let before: string | null = null;
    do {
      const page: { items: { user: string }[]; next_before: string | null } = await (
        await fetch(`${server.url}/memory/agents/durable/transcript?limit=500${before ? `&before=${before}` : ''}`)
      ).json();
      seen.push(...page.items.map((turn) => turn.user));
      before = page.next_before;
    } while (before);
    expect(new Set(seen)).toEqual(new Set(acknowledged));
    expect(seen).toHaveLength(acknowledged.length);
    // the pending signals of the batches that asked for extraction survived too
    const status = await (await fetch(`${server.url}/memory/agents/durable`)).json();
    expect(status).toMatchObject({ turns: 200, pending_signals: 80, index: 'ready' });
    const found = await (await post(`${server.url}/memory/search`, { agent_id: 'durable', query: 'blue door', scope: 'transcript', limit: 100 })).json();
    expect(found.items).toHaveLength(100);
  });
});
