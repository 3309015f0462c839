/**
 * A server that requires access keys, as Anthropic's clients reach it: the key in `x-api-key`
 * (the SDK's `apiKey` header, and Claude Code's with ANTHROPIC_API_KEY) is read exactly like
 * `Authorization: Bearer` on every family that takes keys, errors come in Anthropic's shape, and
 * the key never reaches the log.
 */
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { CreatedKey } from '#shared/api/access.js';
import { perFile } from '../helpers/per-file.js';
import { rejectionOf } from '../helpers/rejection.js';
import { keyRequiredDataDir, send, startServer } from '../helpers/server.js';

const hearth = perFile(
  'The key-required server and its keys',
  async () => {
    // Debug: every request is logged, so a key that reached the log would be seen.
    const server = await startServer({ dataDir: await keyRequiredDataDir({ withModel: true }), env: { HEARTH_LOG_LEVEL: 'debug' } });
    const create = async (body: Record<string, unknown>) => {
      const response = await send(server, '/admin/keys', { body });
      expect(response.status).toBe(201);
      return ((await response.json()) as CreatedKey).key;
    };
    return {
      server,
      inference: await create({ label: 'claude code', scopes: ['inference'] }),
      tools: await create({ label: 'tools only', scopes: ['tools'] }),
    };
  },
  async ({ server }) => {
    expect(await server.stop()).toBe(0);
  },
);

/** The SDK sending `key` in x-api-key only (no Authorization header). */
function clientWith(key: string | null): Anthropic {
  return new Anthropic({ baseURL: hearth.value.server.url, apiKey: null, defaultHeaders: { 'x-api-key': key }, maxRetries: 0 });
}

async function refusal(work: Promise<unknown>): Promise<InstanceType<typeof Anthropic.APIError>> {
  const error = await rejectionOf(work);
  expect(error).toBeInstanceOf(Anthropic.APIError);
  return error as InstanceType<typeof Anthropic.APIError>;
}

describe('the key in x-api-key', () => {
  it('is accepted: an unknown model is then the 404 not_found_error that names the Claude Code settings', async () => {
    const error = await refusal(
      clientWith(hearth.value.inference).messages.create({ model: 'claude-sonnet-4-6', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }),
    );
    expect(error).toBeInstanceOf(Anthropic.NotFoundError);
    expect(error.error).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
    expect(error.message).toContain('ANTHROPIC_MODEL');
    expect(error.message).toContain('tiny');
  });

  it('runs a local model with it', async () => {
    const message = await clientWith(hearth.value.inference).messages.create({ model: 'tiny', max_tokens: 2, messages: [{ role: 'user', content: 'Hi' }] });
    expect(message.usage.output_tokens).toBe(2);
  });

  it('missing, unknown, or without the scope: 401 authentication_error / 403 permission_error in Anthropic’s shape', async () => {
    const body = { model: 'tiny', max_tokens: 2, messages: [{ role: 'user' as const, content: 'Hi' }] };
    // The SDK sends nothing without a credential: a plain request without one.
    const missing = await send(hearth.value.server, '/v1/messages', { body });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error' } });
    const unknown = await refusal(clientWith('hth_notakey0000000000000000000000').messages.create(body));
    expect(unknown).toBeInstanceOf(Anthropic.AuthenticationError);
    expect(unknown.message).not.toContain('hth_notakey');
    const scoped = await refusal(clientWith(hearth.value.tools).messages.countTokens({ model: 'tiny', messages: body.messages }));
    expect(scoped).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect(scoped.error).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
  });

  it('is read on the other families that take keys too, and Bearer still works', async () => {
    const { server, inference, tools } = hearth.value;
    expect((await fetch(`${server.url}/v1/models`, { headers: { 'x-api-key': inference } })).status).toBe(200);
    expect((await fetch(`${server.url}/v1/models`)).status).toBe(401);
    expect((await fetch(`${server.url}/mcp/tools`, { headers: { 'x-api-key': tools } })).status).toBe(200);
    expect((await fetch(`${server.url}/mcp/tools`, { headers: { 'x-api-key': inference } })).status).toBe(403);
    // Clients send a token of their own in one header: the Hearth key in the other one wins.
    expect((await fetch(`${server.url}/v1/models`, { headers: { 'x-api-key': 'sk-ant-placeholder', authorization: `Bearer ${inference}` } })).status).toBe(200);
    expect((await send(server, '/v1/models', { key: inference })).status).toBe(200);
  });

  it('never reaches the log', async () => {
    const { server, inference, tools } = hearth.value;
    const log = server.stdout() + server.stderr();
    expect(log).toContain('/v1/messages');
    expect(log).not.toContain(inference);
    expect(log).not.toContain(tools);
  });
});
