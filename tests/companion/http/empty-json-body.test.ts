/**
 * Clients send `Content-Type: application/json` on every request, even with no body: openai-python's
 * `responses.delete`, the MCP Python SDK's session close (DELETE /mcp), a cancel. A route that takes
 * no body takes that as no body; a route that takes one still answers an empty one with 400.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { ErrorBody } from '#shared/api/errors.js';
import { sharedApp } from '../../helpers/app.js';
import { initializeMcp, MCP_HEADERS } from '../../helpers/mcp.js';

const hearth = sharedApp();
let base: string;

beforeAll(async () => {
  base = await hearth.app.listen({ host: '127.0.0.1', port: 0 });
});

/** What openai-python sends for a request without a body. */
const EMPTY_JSON = { method: 'DELETE', headers: { 'content-type': 'application/json', 'content-length': '0' } } as const;

describe('an empty body with Content-Type: application/json', () => {
  it('deletes a stored response (openai-python responses.delete)', async () => {
    const created = await fetch(`${base}/v1/responses`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tiny', input: 'Hello', max_output_tokens: 2 }),
    });
    expect(created.status).toBe(200);
    const { id } = (await created.json()) as { id: string };
    const deleted = await fetch(`${base}/v1/responses/${id}`, EMPTY_JSON);
    expect(deleted.status, await deleted.clone().text()).toBe(200);
    expect(await deleted.json()).toMatchObject({ id, deleted: true });
    expect((await fetch(`${base}/v1/responses/${id}`)).status).toBe(404);
  });

  it('closes an MCP session (the MCP Python SDK’s DELETE /mcp)', async () => {
    const opened = await initializeMcp(base, '2025-03-26');
    expect(opened.status).toBe(200);
    await opened.text();
    const session = opened.headers.get('mcp-session-id')!;
    const headers = { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26', 'content-length': '0' };
    const closed = await fetch(`${base}/mcp`, { method: 'DELETE', headers });
    expect(closed.status, await closed.text()).toBe(200);
    const after = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...MCP_HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-03-26' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }),
    });
    await after.text();
    expect(after.status).toBe(404);
  });

  it('reaches a cancel, which answers for the run and not for the body', async () => {
    const response = await hearth.app.inject({ ...EMPTY_JSON, method: 'POST', url: '/agents/runs/run_missing/cancel', payload: '' });
    expect((response.json() as ErrorBody).error.code).toBe('run_not_found');
  });

  it('is still a 400 where the route takes a body', async () => {
    const response = await hearth.app.inject({ method: 'POST', url: '/v1/chat/completions', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(response.statusCode).toBe(400);
    expect((response.json() as ErrorBody).error.code).toBe('invalid_json');
  });

  it('is an answer, not a wait, on POST /mcp (which reads its own body)', async () => {
    const response = await fetch(`${base}/mcp`, { method: 'POST', headers: { ...MCP_HEADERS, 'content-length': '0' } });
    await response.text();
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.status).toBeLessThan(500);
  });
});
