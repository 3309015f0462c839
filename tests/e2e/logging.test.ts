import { afterAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../helpers/server.js';

/* What `hearth serve` writes to stderr: JSON lines when stderr is not a terminal, request lines only at debug. */

const running: RunningServer[] = [];

afterAll(async () => {
  for (const server of running) await server.stop();
});

async function serve(env: NodeJS.ProcessEnv): Promise<RunningServer> {
  const server = await startServer({ withModel: false, env });
  running.push(server);
  for (let index = 0; index < 5; index++) expect((await fetch(`${server.url}/health?probe=${index}`)).status).toBe(200);
  expect((await fetch(`${server.url}/v1/models`)).status).toBe(200);
  await server.stop();
  return server;
}

describe('hearth serve logs', () => {
  it('at info, to a pipe: JSON lines and no line per request', async () => {
    const server = await serve({ HEARTH_LOG_LEVEL: 'info' });
    // The sign-in advice is written for the person, never as a log record.
    const lines = server
      .stderr()
      .trim()
      .split('\n')
      .filter((line) => !line.startsWith('To sign the app in'));
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(lines.map((line) => (JSON.parse(line) as { msg: string }).msg)).toContain('stopping');
    expect(server.stderr()).not.toMatch(/\/health|\/v1\/models|incoming request|request completed/);
  });

  it('at debug with HEARTH_LOG_FORMAT=text: one readable line per request, without its query string', async () => {
    const server = await serve({ HEARTH_LOG_LEVEL: 'debug', HEARTH_LOG_FORMAT: 'text' });
    const requests = server.stderr().match(/^\d\d:\d\d:\d\d DEBUG GET \/\S+ \d{3} [\d.]+ ms$/gm) ?? [];
    expect(requests.filter((line) => line.includes('GET /health 200'))).toHaveLength(5);
    expect(requests.filter((line) => line.includes('GET /v1/models 200'))).toHaveLength(1);
    expect(server.stderr()).not.toContain('probe=');
    expect(server.stderr()).not.toMatch(/^\{/m);
  });
});
