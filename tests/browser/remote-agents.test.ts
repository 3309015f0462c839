/**
 * A paired host's agent on the device's Agents screen, in real Chromium against two real
 * companions: listed as `<host>/<agent>` without Edit or Delete, run with its events streamed
 * over the secure channel, its approval shown as the host owner's (no Approve button here),
 * decided on the host. Screenshots: light and dark, phone and desktop.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentApprovalList } from '#shared/api/agents.js';
import { startScriptedProvider, type ScriptedProvider } from '../fixtures/scripted-provider.js';
import { waitFor } from '../helpers/agents.js';
import { startPaired, stopPaired, type PairedCompanions } from '../helpers/remote.js';
import { newSignInLink } from './app-helpers.js';
import { DESKTOP, launch, screenshot, open, SIZES } from './harness.js';

let provider: ScriptedProvider;
let pair: PairedCompanions;
let browser: Browser;
const workspace = mkdtempSync(join(tmpdir(), 'hearth-browser-remote-ws-'));

beforeAll(async () => {
  provider = await startScriptedProvider({
    script: (body: any) =>
      body.messages.at(-1)?.role === 'tool'
        ? { content: 'The note is written on the host.' }
        : { content: 'Writing it.', tool_calls: [{ name: 'write_file', arguments: { path: 'note.txt', content: 'from the device' } }] },
  });
  // Independent starts, overlapped: the device pairs with the host while Chromium starts.
  const agent = {
    id: 'scribe',
    name: 'Scribe',
    model: 'script/scripted',
    tools: ['write_file'],
    workspace,
    tool_policy: { write: 'ask' },
    memory: { enabled: false },
  };
  const config = { providers: [{ name: 'script', base_url: provider.baseUrl, models: ['scripted'] }], agents: [agent] };
  [pair, browser] = await Promise.all([startPaired({ config, agents: ['scribe'] }), launch()]);
});

afterAll(async () => {
  await browser?.close();
  await stopPaired(pair ?? {});
  await provider?.close();
  rmSync(workspace, { recursive: true, force: true });
});

async function openAgents(viewport = DESKTOP, colorScheme: 'light' | 'dark' = 'light'): Promise<{ page: Page; errors: string[] }> {
  const { page, errors } = await open(browser, `${pair.device.url}/agent`, { viewport, colorScheme, signInLink: await newSignInLink(pair.device) });
  await page.getByRole('button', { name: /Scribe/ }).click();
  return { page, errors };
}

describe("a paired host's agent on the device's Agents screen", () => {
  it('runs over the channel and waits for the host owner, who decides on the host', async () => {
    const { page, errors } = await openAgents();
    await page.getByText('Runs on a paired host over the secure channel').waitFor();
    expect(await page.getByRole('button', { name: 'Edit' }).count()).toBe(0);
    expect(await page.locator('.facts code').innerText()).toBe('home/scribe');
    await page.getByLabel('Task', { exact: true }).fill('write a note');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByText("Waiting for the host owner's approval").waitFor();
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await screenshot(page, 'remote-agent-waiting-desktop-light');

    const approval = await waitFor(
      async () => ((await (await fetch(`${pair.host.url}/agents/approvals`)).json()) as AgentApprovalList).data[0],
      10_000,
      'the approval on the host',
    );
    const decided = await fetch(`${pair.host.url}/agents/approvals/${approval.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision: 'approve' }),
    });
    expect(decided.status).toBe(200);
    await page.waitForFunction(() => document.querySelector('section.run')?.getAttribute('data-status') === 'completed', undefined, { timeout: 30_000 });
    expect(await page.locator('section.run').innerText()).toContain('The note is written on the host.');
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('from the device');
    await screenshot(page, 'remote-agent-done-desktop-light');
    expect(errors).toEqual([]);
  });

  for (const [name, viewport] of SIZES) {
    it(`fits a ${name} in dark mode`, async () => {
      const { page } = await openAgents(viewport, 'dark');
      await page.getByText('Runs on a paired host over the secure channel').waitFor();
      const { scroll, width } = await page.evaluate(() => ({ scroll: document.documentElement.scrollWidth, width: window.innerWidth }));
      expect(scroll).toBeLessThanOrEqual(width);
      await screenshot(page, `remote-agent-${name}-dark`);
    });
  }
});
