import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { checkDocument } from '../../../companion/src/config/document.js';
import { asOwner, sharedApp } from '../../helpers/app.js';

/*
 * One agent-id rule everywhere (12): what ingest accepts, every /memory/agents/{id} route can
 * reach; config, keys and X-Service-Agent-Id follow the same rule; a path segment too long for
 * the router answers 414 in the OpenAI error shape.
 */

const hearth = sharedApp({ withModel: false });

const ingest = (agentId: string) =>
  hearth.app.inject({
    method: 'POST',
    url: '/memory/ingest',
    payload: { agent_id: agentId, conversation_id: 'c', turns: [{ user: 'hello', assistant: 'hi' }], skip_extraction: true },
  });

function errorOf(response: LightMyRequestResponse, status: number) {
  expect(response.statusCode, response.body).toBe(status);
  const body = response.json() as { error: { message: string; type: string; code: string; param: string | null } };
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  return body.error;
}

describe('agent ids', () => {
  it('ingest refuses what no route could reach: 101+ characters, "." and "..", a leading dot', async () => {
    for (const id of ['a'.repeat(101), 'b'.repeat(128), '.', '..', '.hidden']) {
      const error = errorOf(await ingest(id), 400);
      expect(error.param, id).toBe('agent_id');
    }
  });

  it('every id ingest accepts is reachable through /memory/agents/{id}', async () => {
    for (const id of ['a'.repeat(100), 'x.y', 'a..b', '_private', '-dash', 'locomo-conv-26']) {
      expect((await ingest(id)).statusCode, id).toBe(200);
      const status = await hearth.app.inject({ method: 'GET', url: `/memory/agents/${encodeURIComponent(id)}` });
      expect(status.statusCode, `${id}: ${status.body}`).toBe(200);
      expect((await hearth.app.inject({ method: 'GET', url: `/memory/agents/${encodeURIComponent(id)}/transcript` })).statusCode, id).toBe(200);
    }
  });

  it('a path segment longer than the router takes is 414 in the OpenAI shape', async () => {
    const error = errorOf(await hearth.app.inject({ method: 'GET', url: `/memory/agents/${'c'.repeat(128)}` }), 414);
    expect(error.code).toBe('uri_too_long');
    expect(error.type).toBe('invalid_request_error');
  });

  it('config, keys and X-Service-Agent-Id follow the same rule', async () => {
    for (const id of ['.', '..', 'a'.repeat(101)]) {
      expect(checkDocument({ version: 1, agents: [{ id }] }).problems, id).toHaveLength(1);
      expect((await hearth.app.inject(asOwner({ method: 'POST', url: '/admin/keys', payload: { label: 'k', agent: id } }))).statusCode, id).toBe(400);
      const header = await hearth.app.inject({ method: 'GET', url: '/agents', headers: { 'x-service-agent-id': id } });
      expect(errorOf(header, 400).param, id).toBe('X-Service-Agent-Id');
    }
    expect(checkDocument({ version: 1, agents: [{ id: 'a'.repeat(100) }] }).problems).toEqual([]);
    expect((await hearth.app.inject({ method: 'GET', url: '/agents', headers: { 'x-service-agent-id': 'helper' } })).statusCode).toBe(200);
  });
});
