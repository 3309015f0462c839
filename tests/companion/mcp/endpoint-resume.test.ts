import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { STREAM_RETRY_MS } from '../../../companion/src/mcp/endpoint.js';
import type { Services } from '../../../companion/src/services.js';
import { testApp } from '../../helpers/app.js';
import { EVERYTHING, initializeMcp, MCP_HEADERS, processesWithMarker, waitFor } from '../../helpers/mcp.js';
import { newDataDir } from '../../helpers/server.js';

/*
 * Resuming a broken /mcp stream with the official SDK client (issue 18, item 15). Between the
 * client and Hearth sits a TCP relay that can cut a connection the way a dropped network does:
 * the client's side goes away, Hearth's side stays open and silent, so Hearth still holds the old
 * stream when the client comes back with Last-Event-ID. The resume must take the stream over
 * (not answer 409 "Stream already has an active connection"), replay what was missed, and the
 * call must end with its result. Done several times in one session.
 */

const marker = randomUUID();
let services: Services;
let close: () => Promise<void>;
let relay: Relay;
let base: string;

interface Relay {
  url: string;
  /** Cuts the client's side of the connection carrying the next server bytes that contain `text`. */
  cutOn(text: string): Promise<void>;
  /** How many GET event streams Hearth has answered with 200 through the relay so far. */
  openStreams(): number;
  close(): Promise<void>;
}

async function startRelay(target: URL): Promise<Relay> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let trigger: { text: string; fire: () => void } | undefined;
  let streams = 0;
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    const pair = { client, upstream };
    pairs.add(pair);
    let getting = false;
    // Requests name the relay's port in Host; Hearth checks Host against its own.
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (text.startsWith('GET /mcp')) getting = true;
      upstream.write(text.replaceAll(`127.0.0.1:${port()}`, target.host), 'latin1');
    });
    upstream.on('data', (chunk: Buffer) => {
      if (getting && chunk.toString('latin1').startsWith('HTTP/1.1 200')) {
        getting = false;
        streams += 1;
      }
      if (client.destroyed) return;
      if (trigger && chunk.toString('utf8').includes(trigger.text)) {
        const { fire } = trigger;
        trigger = undefined;
        // The client's side drops; Hearth's side is left open, as a dead network path leaves it.
        client.destroy();
        fire();
        return;
      }
      client.write(chunk);
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
    upstream.on('close', () => client.destroy());
    client.on('end', () => upstream.end());
  });
  const port = () => (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port()}`,
    cutOn: (text) => new Promise<void>((fire) => (trigger = { text, fire })),
    openStreams: () => streams,
    close: async () => {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

beforeAll(async () => {
  const dataDir = await newDataDir(false);
  writeFileSync(
    join(dataDir, 'config.yaml'),
    stringify({
      version: 1,
      mcp_services: [
        { name: 'everything', transport: 'stdio', command: process.execPath, args: [EVERYTHING], env: { HEARTH_TEST_MARKER: marker }, expose: 'all' },
      ],
    }),
  );
  let app;
  ({ app, services, close } = await testApp({ dataDir, withModel: false }));
  await waitFor(() => services.mcp.serviceStatus('everything').state === 'connected', 'the everything service to connect', 60_000);
  base = await app.listen({ host: '127.0.0.1', port: 0 });
  relay = await startRelay(new URL(base));
}, 120_000);

afterAll(async () => {
  await relay?.close();
  await close();
  await waitFor(() => processesWithMarker(marker).length === 0, 'the everything service to end');
});

describe('/mcp resumption with the SDK client', () => {
  it('a call whose stream is cut mid-way resumes on the same stream and ends with its result, again and again', async () => {
    const errors: string[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`), {
      reconnectionOptions: { initialReconnectionDelay: 200, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 1.5, maxRetries: 3 },
    });
    const client = new Client({ name: 'resume-test', version: '1.0.0' });
    client.onerror = (error) => void errors.push(error.message);
    await client.connect(transport);
    try {
      for (let round = 0; round < 5; round++) {
        const progress: number[] = [];
        const cut = relay.cutOn('notifications/progress');
        const result = await client.callTool({ name: 'everything_trigger-long-running-operation', arguments: { duration: 0.6, steps: 3 } }, undefined, {
          onprogress: (update) => void progress.push(update.progress),
          timeout: 30_000,
        });
        await cut;
        expect((result.content as { text: string }[])[0]!.text, `round ${round}`).toMatch(/completed/i);
        expect(
          errors.filter((message) => /409|Conflict|active connection/.test(message)),
          `round ${round}`,
        ).toEqual([]);
      }
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it('a cut notification stream comes back on a plain GET and hears the next notification', async () => {
    const errors: string[] = [];
    let changes = 0;
    const transport = new StreamableHTTPClientTransport(new URL(`${relay.url}/mcp`));
    const client = new Client({ name: 'notify-test', version: '1.0.0' });
    client.onerror = (error) => void errors.push(error.message);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void (changes += 1));
    const opened = relay.openStreams();
    await client.connect(transport);
    try {
      // The standalone GET stream opens after initialization; the first list change goes down it and is cut off.
      await waitFor(() => services.mcp.catalog.all().length > 0 && transport.sessionId !== undefined, 'the session');
      await expect.poll(() => relay.openStreams(), { message: 'the standalone GET stream' }).toBeGreaterThan(opened);
      const cut = relay.cutOn('notifications/tools/list_changed');
      services.mcp.catalog.replaceService('extra', []);
      await cut;
      // The client reconnects on its own; the next change reaches it on the new stream.
      // Each poll that has heard nothing yet makes another change, until one arrives.
      await expect
        .poll(
          () => {
            if (changes === 0) services.mcp.catalog.replaceService('extra', []);
            return changes;
          },
          { interval: 200, message: 'a list change on the reconnected stream' },
        )
        .toBeGreaterThan(0);
      expect(errors.filter((message) => /409|Conflict/.test(message))).toEqual([]);
    } finally {
      services.mcp.catalog.removeService('extra');
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it('streams carry a retry: field, and an unknown Last-Event-ID is a 400', async () => {
    const headers = { ...MCP_HEADERS, 'mcp-protocol-version': '2025-11-25' };
    const open = async () => {
      const init = await initializeMcp(base, '2025-11-25', headers);
      const text = await init.text();
      return { session: init.headers.get('mcp-session-id')!, text };
    };
    const first = await open();
    expect(first.text).toMatch(new RegExp(`^id: (\\S+)\nretry: ${STREAM_RETRY_MS}\n`, 'm'));
    const firstId = /^id: (\S+)$/m.exec(first.text)![1]!;
    for (const lastEventId of ['999999', 'not-an-id', '0']) {
      const response = await fetch(`${base}/mcp`, {
        headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': first.session, 'last-event-id': lastEventId },
      });
      expect(response.status, lastEventId).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/Last-Event-ID/);
    }
    // An id the session gave out resumes.
    const resumed = await fetch(`${base}/mcp`, {
      headers: { ...headers, accept: 'text/event-stream', 'mcp-session-id': first.session, 'last-event-id': firstId },
    });
    expect(resumed.status).toBe(200);
    await resumed.body?.cancel();
    await fetch(`${base}/mcp`, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': first.session } });
  });
});
