/**
 * The Server screen shows a provider pool's servers with the figures the metrics report: one up,
 * one down. Real parts: a `hearth serve` endpoint with the tiny model, a port nothing listens on,
 * and a front companion whose pool lists both; its health checks find the second one down.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServerStatus } from '#shared/api/admin.js';
import { closedPort } from '../helpers/mock-provider.js';
import { newDataDir, startServer, type RunningServer } from '../helpers/server.js';
import { SCHEMES, screenshot, sharedBrowserApp, SIZES } from './harness.js';

let endpoint: RunningServer;
beforeAll(async () => {
  endpoint = await startServer();
});
afterAll(() => endpoint?.stop());

/** The front companion: its pool lists the endpoint and a port nothing listens on. */
const app = sharedBrowserApp({
  async server() {
    const down = `http://127.0.0.1:${await closedPort()}/v1`;
    const dataDir = await newDataDir(false);
    writeFileSync(
      join(dataDir, 'config.yaml'),
      [
        'version: 1',
        'providers:',
        '  - name: lab',
        '    endpoints:',
        `      - { url: ${endpoint.url}/v1, weight: 2 }`,
        `      - { url: ${down} }`,
        '    models: [tiny]',
        '    health: { interval_seconds: 0.5, failures_to_open: 2, open_seconds: 30 }',
        '',
      ].join('\n'),
    );
    return startServer({ dataDir });
  },
});

describe('the Server screen with a provider pool', () => {
  it('lists each server of the pool, up or down, with what it is doing', async () => {
    // The health checks open the unreachable one's circuit within a few checks.
    await expect
      .poll(async () => ((await (await fetch(`${app.server.url}/admin/status`)).json()) as ServerStatus).providers[0]!.endpoints[1]!.circuit, {
        timeout: 60_000,
      })
      .toBe('open');
    for (const [name, viewport] of SIZES) {
      for (const colorScheme of SCHEMES) {
        const { context, page, errors } = await app.open('/server', { viewport, colorScheme, signIn: true });
        const rows = page.getByTestId('provider-endpoint');
        await rows.nth(1).waitFor();
        expect(await rows.count()).toBe(2);
        expect(await rows.nth(0).getAttribute('data-circuit')).toBe('closed');
        expect(await rows.nth(0).innerText()).toMatch(/— up · 0 in progress$/);
        expect(await rows.nth(1).getAttribute('data-circuit')).toBe('open');
        expect(await rows.nth(1).innerText()).toMatch(/— down: not reachable \(connection refused\), next check in \d+ s · 0 in progress$/);
        // Words for people: no error codes, routes or settings.
        expect(await page.locator('main').innerText()).not.toMatch(/ECONNREFUSED|circuit|half_open|\/v1\/models|max_concurrent/);
        const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
        expect(scroll).toBeLessThanOrEqual(width);
        await rows.nth(1).evaluate((row) => row.scrollIntoView({ block: 'center' }));
        await screenshot(page, `server-pool-${name}-${colorScheme}`);
        expect(errors).toEqual([]);
        await context.close();
      }
    }
  });
});
