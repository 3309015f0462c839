/**
 * Recordings attached to a message, in real Chromium with its fake microphone (a steady beep, the
 * permission granted without a prompt) against a real `hearth serve` whose models are the tiny
 * text model and tiny-audio (the tiny model with a sound projector beside it). With tiny-audio
 * chosen, the microphone attaches what it records instead of writing it down: a chip with its
 * length, a player and a remove button. A model that cannot hear says so before anything is
 * sent and names tiny-audio. The message goes with an input_audio part (WAV); the reply comes,
 * and the prompt grew by the projector's tokens for the sound. The clip stays in the transcript
 * after a reload and offline, stored beside its conversation.
 *
 * Only the llama-server engine runs a projector. When its build is ready (the server-engine
 * project makes it; it is cached outside the clone), the companion runs on it and tiny-audio
 * answers. Without the build the companion runs in process, and the reply test checks instead that
 * the companion refused the sound with the reason and that the clip came back to the composer.
 */
import type { Page, Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { readBuildState, serverBuildPaths } from '../../companion/src/inference/server/build.js';
import { projectorAudioTokens } from '../../scripts/gguf/write-projector.js';
import { installProjectorModel } from '../helpers/models.js';
import { newDataDir, startServer } from '../helpers/server.js';
import { untilTrue } from '../helpers/until.js';
import { chooseModel, lastReply, replyEnds, setSetting, storedConversations, storedMedia } from './app-helpers.js';
import { DESKTOP, SCHEMES, screenshot, sharedBrowserApp, SIZES, waitForServiceWorker } from './harness.js';

const onEngine = readBuildState(serverBuildPaths(), process.env, () => undefined).state === 'ready';

const app = sharedBrowserApp({
  flags: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
  async server() {
    const dataDir = await newDataDir(true);
    await installProjectorModel(dataDir, 'audio');
    return startServer({ dataDir, env: { HEARTH_ENGINE: onEngine ? 'server' : 'in-process' } });
  },
  page: { colorScheme: 'light' },
});

const box = (page: Page) => page.getByLabel('Message', { exact: true });
const chips = (page: Page) => page.getByRole('list', { name: 'Recordings to send' }).getByRole('listitem');
const refusal = (page: Page) => page.locator('#composer-refusal');
const sentPlayers = 'article[data-role="user"] [aria-label="Recordings sent"] audio';

/** Records until the clock shows a second, then stops. */
async function recordASecond(page: Page): Promise<void> {
  await page.getByRole('button', { name: 'Record a message' }).click();
  await untilTrue(async () => /^Recording 0:0[1-9] of 0:30$/.test((await page.getByRole('timer').textContent())?.trim() ?? ''), 'the clock to pass a second');
  await page.getByRole('button', { name: 'Stop recording' }).click();
}

/** How long each of the players `selector` finds plays, once there are `count` and each has read its WAV. */
async function playerSeconds(page: Page, selector: string, count: number): Promise<number[]> {
  await page.waitForFunction(
    ({ css, count }) => {
      const players = [...document.querySelectorAll<HTMLAudioElement>(css)];
      return players.length === count && players.every((player) => player.readyState >= 1 && Number.isFinite(player.duration));
    },
    { css: selector, count },
  );
  return page.locator(selector).evaluateAll((players) => players.map((player) => (player as HTMLAudioElement).duration));
}

/** Pictures of what the page shows now, in each width (the phone at 375 px) and colour scheme, then back to the desktop in light. */
async function pictures(page: Page, name: string): Promise<void> {
  for (const [size, viewport] of SIZES)
    for (const scheme of SCHEMES) {
      await page.setViewportSize(size === 'phone' ? { ...viewport, width: 375 } : viewport);
      await page.emulateMedia({ colorScheme: scheme });
      await screenshot(page, `sounds-${name}-${size}-${scheme}`);
    }
  await page.setViewportSize(DESKTOP);
  await page.emulateMedia({ colorScheme: 'light' });
}

describe('recordings for a model that hears', () => {
  it('attaches what the microphone records as a clip with its length, a player and a remove button, instead of writing it down', async () => {
    const { page } = app;
    const transcriptions: string[] = [];
    page.on('request', (request) => void (request.url().includes('/v1/audio/transcriptions') && transcriptions.push(request.url())));
    await chooseModel(page, 'companion:tiny-audio');
    const speak = page.getByRole('button', { name: 'Record a message' });
    await untilTrue(async () => (await speak.getAttribute('aria-disabled')) === 'false', 'the microphone to turn on');
    expect(await speak.getAttribute('title')).toBe('Record a clip of up to 30 seconds: tiny-audio hears it with your message');

    await recordASecond(page);
    await expect.poll(() => chips(page).count()).toBe(1);
    expect(await chips(page).first().getByRole('group').getAttribute('aria-label')).toMatch(/^recording 1, 0:0[1-9]$/);
    const [seconds] = await playerSeconds(page, '[aria-label="Recordings to send"] audio', 1);
    expect(seconds).toBeGreaterThan(0.5);
    expect(await page.getByLabel('Play recording 1').count()).toBe(1);
    expect(await box(page).inputValue()).toBe('');
    expect(transcriptions).toEqual([]);

    await recordASecond(page);
    await expect.poll(() => chips(page).count()).toBe(2);
    const remove = page.getByRole('button', { name: 'Remove recording 2' });
    await remove.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => chips(page).count()).toBe(1);
    expect(await page.getByRole('button', { name: /^Remove recording/ }).count()).toBe(1);
    await box(page).fill('What do you hear?');
    await pictures(page, 'chip');
  });

  it('a model that cannot hear says so before sending, names one that can, and keeps the message', async () => {
    const { page } = app;
    await chooseModel(page, 'companion:tiny');
    await expect.poll(() => refusal(page).innerText()).toMatch(/^tiny cannot hear recordings: it has no projector with an audio encoder/);
    expect(await refusal(page).innerText()).toContain('Switch to tiny-audio, which hears sound');
    expect(await page.getByRole('form', { name: 'Send a message' }).getByRole('button', { name: 'Send' }).isDisabled()).toBe(true);
    await box(page).press('Enter');
    expect(await page.locator('article[data-role="user"]').count()).toBe(0);
    expect(await box(page).inputValue()).toBe('What do you hear?');
    expect(await chips(page).count()).toBe(1);
    await pictures(page, 'refused');

    await page.getByRole('button', { name: 'Switch to tiny-audio' }).click();
    await expect.poll(() => page.locator('#model-picker').getAttribute('data-value')).toBe('companion:tiny-audio');
    expect(await refusal(page).count()).toBe(0);
  });

  it('sends the clip as an input_audio part with the text; the prompt grows by the sound’s tokens', async () => {
    const { page, server } = app;
    await setSetting(page, 'Max tokens', '8');
    const requested = page.waitForRequest((request: Request) => request.url().endsWith('/v1/chat/completions') && request.method() === 'POST');
    await box(page).press('Enter');
    const body = (await requested).postDataJSON() as { model: string; messages: { role: string; content: { type: string }[] }[] };
    expect(body.model).toBe('tiny-audio');
    const [question] = body.messages;
    expect(question!.content.map((part) => part.type)).toEqual(['input_audio', 'text']);
    const audio = question!.content[0] as unknown as { input_audio: { data: string; format: string } };
    expect(audio.input_audio.format).toBe('wav');
    const wav = Buffer.from(audio.input_audio.data, 'base64');
    expect([wav.subarray(0, 4).toString('latin1'), wav.subarray(8, 12).toString('latin1'), wav.readUInt32LE(24), wav.readUInt16LE(22)]).toEqual([
      'RIFF',
      'WAVE',
      16_000,
      1,
    ]);
    expect(question!.content[1]).toEqual({ type: 'text', text: 'What do you hear?' });

    if (onEngine) {
      expect((await replyEnds(page, 'done', 120_000)).length).toBeGreaterThan(0);
      // The same question without the sound, asked of the same model: the prompt with it is longer by the projector's tokens.
      const plain = await fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'tiny-audio', max_tokens: 1, messages: [{ role: 'user', content: 'What do you hear?' }] }),
      });
      const { usage } = (await plain.json()) as { usage: { prompt_tokens: number } };
      const stats = await lastReply(page).getByTestId('stats').innerText();
      expect(Number(/(\d+) prompt/.exec(stats)?.[1])).toBe(usage.prompt_tokens + projectorAudioTokens);
      expect(await chips(page).count()).toBe(0);
      expect(await box(page).inputValue()).toBe('');
    } else {
      // In process the companion refuses the sound with the reason; the message and its clip come back to the composer.
      await lastReply(page).and(page.locator('[data-status="error"]')).waitFor();
      expect(await page.getByRole('alert').filter({ hasText: 'only on the llama-server engine' }).count()).toBe(1);
      await expect.poll(() => chips(page).count()).toBe(1);
      expect(await box(page).inputValue()).toBe('What do you hear?');
    }
    expect((await playerSeconds(page, sentPlayers, 1))[0]).toBeGreaterThan(0.5);
    await pictures(page, 'sent');
  });

  it('keeps the clip in the transcript after a reload and offline, stored beside the conversation', async () => {
    const { page, context } = app;
    const stored = await storedConversations(page);
    const sounds = (stored[0]!.messages[0] as { sounds?: { id: string; type: string; seconds: number }[] }).sounds;
    expect(sounds).toEqual([{ id: expect.stringMatching(/^snd_/), type: 'audio/wav', seconds: expect.any(Number) }]);
    expect(sounds![0]!.seconds).toBeGreaterThan(0.5);
    const media = await storedMedia(page);
    expect(media).toEqual([{ id: sounds![0]!.id, conversationId: expect.stringMatching(/^conv_/), type: 'audio/wav' }]);

    await waitForServiceWorker(page);
    await page.reload();
    const [seconds] = await playerSeconds(page, sentPlayers, 1);
    expect(seconds).toBeCloseTo(sounds![0]!.seconds, 1);
    await context.setOffline(true);
    try {
      await page.reload();
      expect((await playerSeconds(page, sentPlayers, 1))[0]).toBeCloseTo(sounds![0]!.seconds, 1);
      await pictures(page, 'reloaded');
    } finally {
      await context.setOffline(false);
    }
  });
});
