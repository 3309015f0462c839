/**
 * Images to an agent from the app's chat, in real Chromium against a real `hearth serve` whose
 * models are the tiny text-only model and the tiny vision model with its generated projector:
 * an agent on the text-only model is refused before anything is sent, named with its model; an
 * agent on the vision model gets the image in its run (the question's image_url part), and on
 * llama-server the model reads it, by its own count of the prompt.
 *
 * Only the llama-server engine runs a projector. When its build is ready (the server-engine
 * project makes it; it is cached outside the clone), the companion runs on it. Without the build
 * the companion runs in process, and the run fails on the image with the reason instead.
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import sharp from 'sharp';
import { beforeAll, describe, expect, it } from 'vitest';
import type { AgentRun, AgentRunSummary } from '#shared/api/agents.js';
import { readBuildState, serverBuildPaths } from '../../companion/src/inference/server/build.js';
import { projectorImageTokens } from '../../scripts/gguf/write-projector.js';
import { agentDataDir } from '../helpers/agents.js';
import { tinyVisionModelPaths } from '../helpers/models.js';
import { startServer } from '../helpers/server.js';
import { tempFolder } from '../helpers/temp.js';
import { chooseModel, lastReply, replyEnds } from './app-helpers.js';
import { DESKTOP, SCHEMES, screenshot, sharedBrowserApp, SIZES } from './harness.js';

const onEngine = readBuildState(serverBuildPaths(), process.env, () => undefined).state === 'ready';
const QUESTION = 'What colour is this?';

const app = sharedBrowserApp({
  async server() {
    const settings = { tools: [], max_tokens: 3, temperature: 0, memory: { enabled: false }, max_steps: 2 };
    const dataDir = await agentDataDir({
      withModel: true,
      agents: [
        { id: 'looker', name: 'Looker', model: 'tiny-vision', ...settings },
        { id: 'reader', name: 'Reader', model: 'tiny', ...settings },
      ],
    });
    const { model, projector } = await tinyVisionModelPaths();
    // A folder of their own: a projector pairs with every model in its folder (the tiny model is in models/).
    mkdirSync(join(dataDir, 'models', 'vision'));
    copyFileSync(model, join(dataDir, 'models', 'vision', 'tiny-vision.gguf'));
    copyFileSync(projector, join(dataDir, 'models', 'vision', 'mmproj-tiny-vision.gguf'));
    return startServer({ dataDir, env: { HEARTH_ENGINE: onEngine ? 'server' : 'in-process' } });
  },
  page: { colorScheme: 'light' },
});

let png: Buffer;
let file = '';
beforeAll(async () => {
  png = await sharp({ create: { width: 24, height: 16, channels: 3, background: { r: 30, g: 140, b: 200 } } })
    .png()
    .toBuffer();
  file = join(tempFolder('agent-images'), 'blue.png');
  writeFileSync(file, png);
});

const pending = (page: Page) => page.getByRole('list', { name: 'Images to send' }).getByRole('listitem');
const refusal = (page: Page) => page.locator('#composer-refusal');
const sendButton = (page: Page) => page.getByRole('form', { name: 'Send a message' }).getByRole('button', { name: 'Send' });

/** Pictures of what the page shows now, in each width (the phone at 375 px) and colour scheme, then back to the desktop in light. */
async function pictures(page: Page, name: string): Promise<void> {
  for (const [size, viewport] of SIZES)
    for (const scheme of SCHEMES) {
      await page.setViewportSize(size === 'phone' ? { ...viewport, width: 375 } : viewport);
      await page.emulateMedia({ colorScheme: scheme });
      await screenshot(page, `agent-images-${name}-${size}-${scheme}`);
    }
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: 'light' });
}

/** A request of the test's own to the companion (the loopback side), as JSON. */
async function companion<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${app.server.url}${path}`, { ...init, headers: { 'content-type': 'application/json', ...init?.headers } });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

describe('images to an agent', () => {
  it('are refused before sending to an agent whose model cannot read them, naming the agent and its model', async () => {
    const { page } = app;
    await chooseModel(page, 'agent:reader');
    const chooser = page.waitForEvent('filechooser');
    await page.getByRole('button', { name: 'Attach images' }).click();
    await (await chooser).setFiles(file);
    await expect.poll(() => pending(page).count()).toBe(1);
    await page.getByLabel('Message', { exact: true }).fill(QUESTION);

    await expect.poll(() => refusal(page).innerText()).toMatch(/^Reader runs on tiny, which cannot read images: it has no vision projector/);
    expect(await refusal(page).innerText()).toContain('Give Reader a model that reads images on the Agents page, switch to tiny-vision, which reads images');
    expect(await sendButton(page).isDisabled()).toBe(true);
    await page.getByLabel('Message', { exact: true }).press('Enter');
    expect(await page.locator('article[data-role="user"]').count()).toBe(0);
    await pictures(page, 'refused');
  });

  it('go to an agent whose model reads them, in its run, and the model reads them', async () => {
    const { page } = app;
    await chooseModel(page, 'agent:looker');
    expect(await refusal(page).count()).toBe(0);
    expect(await sendButton(page).isEnabled()).toBe(true);
    const requested = page.waitForRequest((request) => request.url().endsWith('/agents/looker/run') && request.method() === 'POST');
    await page.getByLabel('Message', { exact: true }).press('Enter');
    const url = `data:image/png;base64,${png.toString('base64')}`;
    const sent = [
      { type: 'image_url', image_url: { url } },
      { type: 'text', text: QUESTION },
    ];
    expect((await requested).postDataJSON()).toEqual({ input: [{ role: 'user', content: sent }], stream: true });

    // (replyEnds waits for text, and a failed reply has none.)
    if (onEngine) expect((await replyEnds(page, 'done', 120_000)).length).toBeGreaterThan(0);
    else await lastReply(page).and(page.locator('[data-status="error"]')).waitFor();
    const [latest] = (await companion<{ data: AgentRunSummary[] }>('/agents/looker/runs?limit=1')).data;
    const run = await companion<AgentRun>(`/agents/runs/${latest!.id}`);
    // The run keeps its input as the chat sent it.
    expect(run.input).toEqual([{ role: 'user', content: sent }]);
    if (onEngine) {
      expect(run.status).toBe('completed');
      // The same question without the image: the chat's prompt was the projector's tokens longer.
      const plain = await companion<AgentRun>('/agents/looker/run', {
        method: 'POST',
        body: JSON.stringify({ input: [{ role: 'user', content: [{ type: 'text', text: QUESTION }] }] }),
      });
      expect(plain.status).toBe('completed');
      expect(run.steps[0]!.usage.prompt_tokens).toBe(plain.steps[0]!.usage.prompt_tokens + projectorImageTokens);
      expect(await lastReply(page).getByTestId('stats').innerText()).toContain(`${run.usage.prompt_tokens} prompt`);
    } else {
      // In process the run fails on the image with the reason; the message and its image come back to the composer.
      expect(run.status).toBe('failed');
      expect(await page.getByRole('alert').filter({ hasText: 'only on the llama-server engine' }).count()).toBe(1);
      await expect.poll(() => pending(page).count()).toBe(1);
    }
    await pictures(page, 'sent');
  });
});
