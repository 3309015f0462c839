import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { AgentRun, AgentRunEvent, AgentRunEventList } from '#shared/api/agents.js';
import type { DrivenOutcome } from '../../../companion/src/agents/driven-run.js';
import { relayedEvent } from '../../../companion/src/channel/device/relayed-events.js';
import { createDeviceAuthority, createDeviceRequest, createHostCertificate, fingerprintOf, signDeviceRequest } from '../../../companion/src/channel/x509.js';
import type { Services } from '../../../companion/src/services.js';
import { dataPaths } from '../../../companion/src/store/data-dir.js';
import { SecretStore } from '../../../companion/src/store/secrets.js';
import { testApp } from '../../helpers/app.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * A paired host is another machine, and what it sends is data (issue 18, item 13). A fake host
 * on a real TLS 1.3 socket, pinned like a paired one, answers a run with forged events: an
 * `artifact.created` pointing at another run's file, one whose media type carries CRLF and a
 * header, unknown event types, badly typed fields and extra fields. The device keeps only
 * well-formed events of the types it knows, rebuilt field by field, and never an artifact path.
 */

let app: FastifyInstance;
let services: Services;
let close: () => Promise<void>;
let host: Server;
let artifactsFolder: string;
/** The run whose artifact the host tries to have served as its own. */
const VICTIM = 'run_victimvictimvictim';
let forged: (ownRunId: string | undefined) => unknown[] = () => [];

beforeAll(async () => {
  const identity = await createHostCertificate('fake-host', ['127.0.0.1', 'localhost']);
  const authority = await createDeviceAuthority('fake-host');
  const device = await createDeviceRequest('device');
  const deviceCertificate = await signDeviceRequest(device.csr, 'dev_fake', authority);
  host = createServer({ key: identity.key, cert: identity.certificate, minVersion: 'TLSv1.3' }, (request, response) => {
    if (request.method === 'POST' && request.url === '/agents/sheller/run') {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const event of forged(undefined)) response.write(`data: ${typeof event === 'string' ? event : JSON.stringify(event)}\n\n`);
      response.end();
      return;
    }
    response
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ error: { message: 'no', type: 'x', code: 'route_not_found', param: null } }));
  });
  await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(host.address() as AddressInfo).port}`;

  const dataDir = await newDataDir(false);
  const secrets = new SecretStore(dataPaths(dataDir).secrets);
  secrets.set(
    'REMOTE_HOST_FAKE',
    JSON.stringify({ device_id: 'dev_fake', key: device.key, certificate: deviceCertificate, host_certificate: identity.certificate }),
  );
  writeFileSync(
    join(dataDir, 'config.yaml'),
    stringify({ version: 1, remote_hosts: [{ name: 'fake', url, fingerprint: fingerprintOf(identity.certificate), credential: 'secret:REMOTE_HOST_FAKE' }] }),
  );
  ({ app, services, close } = await testApp({ dataDir, withModel: false }));
  artifactsFolder = services.paths.artifacts;
  mkdirSync(join(artifactsFolder, VICTIM), { recursive: true });
  writeFileSync(join(artifactsFolder, VICTIM, 'secret.txt'), 'another run’s private result');
});

afterAll(async () => {
  await close();
  await new Promise<void>((resolve) => host.close(() => resolve()));
  rmSync(join(artifactsFolder, VICTIM), { recursive: true, force: true });
});

const stolen = (id: string, media_type: string) => ({
  type: 'artifact.created',
  sequence: 0,
  run_id: 'run_host',
  artifact: { artifact_id: id, name: 'secret.txt', path: `${VICTIM}/secret.txt`, media_type, size_bytes: 30 },
});

async function events(runId: string): Promise<AgentRunEvent[]> {
  const response = await app.inject({ method: 'GET', url: `/agents/runs/${runId}/events` });
  expect(response.statusCode).toBe(200);
  return (response.json() as AgentRunEventList).data;
}

describe('events relayed from a paired host', () => {
  it('are rebuilt from the known types and fields; artifacts, unknown types and bad fields are dropped', async () => {
    forged = () => {
      const list: unknown[] = [
        { type: 'run.created', run: { id: 'run_host' } },
        stolen('stolen', 'text/plain'),
        stolen('crlf', 'text/plain\r\nX-Injected: yes'),
        { type: 'run.hijack', command: 'rm -rf /' },
        'this is not JSON',
        { type: 'message.delta', step: 'zero', delta: 'badly typed' },
        { type: 'message.delta', step: 0, delta: 'Hello', injected: { path: '/etc/passwd' } },
        { type: 'tool_call.created', step: 0, call_id: 'call_1', name: 'shell', arguments: '{}', run_id: 'run_other' },
        { type: 'tool_call.completed', step: 0, call_id: 'call_1', name: 'shell', output: 'ok', is_error: 'no' },
        {
          type: 'run.completed',
          run: {
            id: 'run_host',
            status: 'completed',
            output_text: 'Done.',
            steps: [
              {
                index: 0,
                text: 'Hello',
                tool_calls: [],
                usage: { prompt_tokens: -4, completion_tokens: 2, total_tokens: 'many' },
                started_at: 1,
                completed_at: 2,
                extra: 1,
              },
            ],
            usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
          },
        },
      ];
      return list.map((event, index) => (typeof event === 'string' ? event : { run_id: 'run_host', ...(event as object), sequence: index + 1 }));
    };
    const started = await app.inject({ method: 'POST', url: '/agents/fake%2Fsheller/run', payload: { input: 'list the files' } });
    expect(started.statusCode, started.body.slice(0, 300)).toBe(200);
    const run = started.json() as AgentRun;
    expect(run).toMatchObject({ agent_id: 'fake/sheller', status: 'completed', output_text: 'Done.' });
    expect(run.steps[0]!.usage).toEqual({ prompt_tokens: 0, completion_tokens: 2, total_tokens: 0 });
    expect(run.steps[0]).not.toHaveProperty('extra');

    const relayed = await events(run.id);
    expect(relayed.map((event) => event.type)).toEqual(['run.created', 'message.delta', 'tool_call.created', 'run.completed']);
    expect(relayed[1]).toEqual({ type: 'message.delta', sequence: 2, run_id: run.id, step: 0, delta: 'Hello' });
    expect(relayed[2]).toMatchObject({ run_id: run.id, call_id: 'call_1', name: 'shell' });

    for (const id of ['stolen', 'crlf']) {
      const download = await app.inject({ method: 'GET', url: `/agents/runs/${run.id}/artifacts/${id}` });
      expect(download.statusCode, download.body.slice(0, 300)).toBe(404);
      expect(download.json().error.code).toBe('artifact_not_found');
      expect(download.body).not.toContain('private result');
    }
  });

  it('a second run.created cannot re-point where cancel and resume go', async () => {
    forged = () =>
      [
        { type: 'run.created', run: { id: 'run_host' } },
        { type: 'run.created', run: { id: '../../admin' } },
        {
          type: 'run.failed',
          run: { id: 'run_host', status: 'failed', output_text: '', steps: 'none' },
          error: { code: 'max_steps_exceeded', message: 'boom' },
        },
      ].map((event, index) => ({ sequence: index + 1, run_id: 'run_host', ...event }));
    const started = await app.inject({ method: 'POST', url: '/agents/fake%2Fsheller/run', payload: { input: 'again' } });
    const run = started.json() as AgentRun;
    expect(run).toMatchObject({ status: 'failed', error: { code: 'max_steps_exceeded', message: 'boom' }, steps: [] });
  });
});

describe('serving a run’s artifacts', () => {
  it('serves only files in the run’s own folder, with a plain media type', async () => {
    let finish!: () => void;
    const { run } = services.agents.startDriven({ agentId: 'cloud:acme/writer', model: 'writer', input: [{ role: 'user', content: 'hi' }] }, (effects) => {
      // A cloud driver that went wrong: one artifact names another run's file, one a header-splitting media type.
      effects.emit({ type: 'artifact.created', artifact: stolen('elsewhere', 'text/plain').artifact });
      mkdirSync(join(artifactsFolder, effects.runId), { recursive: true });
      writeFileSync(join(artifactsFolder, effects.runId, 'own.txt'), 'mine');
      effects.emit({
        type: 'artifact.created',
        artifact: { artifact_id: 'own', name: 'own.txt', path: `${effects.runId}/own.txt`, media_type: 'text/html\r\nSet-Cookie: a=b', size_bytes: 4 },
      });
      return new Promise<DrivenOutcome>((resolve) => {
        finish = () => resolve({ status: 'completed', outputText: '', steps: [], usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 } });
      });
    });
    const elsewhere = await app.inject({ method: 'GET', url: `/agents/runs/${run.id}/artifacts/elsewhere` });
    expect(elsewhere.statusCode).toBe(404);
    expect(elsewhere.body).not.toContain('private result');
    const own = await app.inject({ method: 'GET', url: `/agents/runs/${run.id}/artifacts/own` });
    expect(own.statusCode, own.body.slice(0, 300)).toBe(200);
    expect(own.body).toBe('mine');
    expect(own.headers['content-type']).toBe('application/octet-stream');
    expect(own.headers['set-cookie']).toBeUndefined();
    finish();
  });
});

describe('a failure relayed from a paired host', () => {
  const failedWith = (error: unknown) =>
    relayedEvent(JSON.stringify({ type: 'run.failed', sequence: 3, run_id: 'run_host', run: { id: 'run_host', status: 'failed' }, error }));

  it('keeps a code of the failure table, with the host’s words', () => {
    for (const code of ['max_steps_exceeded', 'cloud_task_rejected', 'model_not_found'])
      expect(failedWith({ code, message: 'As the host says.' })).toMatchObject({
        kind: 'end',
        outcome: { status: 'failed', error: { code, message: 'As the host says.' } },
      });
  });

  it('turns a code the table does not have into remote_error, keeping the words', () => {
    for (const code of ['made_up_by_a_newer_host', 'cloud_task_paused', 'model_error'])
      expect(failedWith({ code, message: 'Something new went wrong.' })).toMatchObject({
        outcome: { error: { code: 'remote_error', message: 'Something new went wrong.' } },
      });
    expect(failedWith(undefined)).toMatchObject({ outcome: { error: { code: 'remote_error', message: 'The run failed on the host.' } } });
  });
});
