import { beforeAll, describe, expect, it } from 'vitest';
import { sharedApp } from '../../helpers/app.js';
import { initializeMcp, MCP_HEADERS } from '../../helpers/mcp.js';

/*
 * /mcp sessions are capped per key (13): one key opening sessions without end evicts only its
 * own oldest, never another key's. Raw Streamable HTTP requests against the listening hearth.app.
 */

const hearth = sharedApp({ withModel: false });
let base: string;

beforeAll(async () => {
  base = await hearth.app.listen({ host: '127.0.0.1', port: 0 });
});

async function initialize(key: string): Promise<string> {
  const response = await initializeMcp(base, '2025-03-26', { authorization: `Bearer ${key}` });
  expect(response.status).toBe(200);
  await response.text();
  return response.headers.get('mcp-session-id')!;
}

async function listTools(key: string, session: string): Promise<number> {
  const response = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, authorization: `Bearer ${key}`, 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
  });
  await response.text();
  return response.status;
}

describe('/mcp sessions', () => {
  it('one key opening many sessions evicts only its own oldest, never another key’s', async () => {
    const bystander = hearth.services.keys.create({ label: 'bystander', scopes: ['tools'] }).key;
    const flooder = hearth.services.keys.create({ label: 'flooder', scopes: ['tools'] }).key;
    const kept = await initialize(bystander);
    const first = await initialize(flooder);
    let last = first;
    for (let index = 0; index < 260; index++) last = await initialize(flooder);
    expect(await listTools(bystander, kept)).toBe(200);
    expect(await listTools(flooder, last)).toBe(200);
    // The flooder's own oldest session made room.
    expect(await listTools(flooder, first)).toBe(404);
  });
});
