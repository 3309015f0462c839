/**
 * The chat's microphone in real Chromium with its fake microphone (a steady beep, and the
 * permission granted without a prompt) against a real `hearth serve`. With only the text model the
 * button is off and says what is needed. Once tiny-audio (the tiny model with a sound projector)
 * is copied into the models folder the button records, shows the time, stops and cancels. The
 * in-process engine the browser tests run cannot run a projector, so the companion's own refusal
 * shows; the transcript filling the composer is checked with POST /v1/audio/transcriptions routed
 * (page.route), after checking the recording the page sends is a 16 kHz mono WAV. A blocked
 * microphone is said in plain words.
 */
import type { Page, Request } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { installProjectorModel } from '../helpers/models.js';
import { untilTrue } from '../helpers/until.js';
import { launch, open, screenshot, sharedBrowserApp, SCHEMES, SIZES } from './harness.js';

const FAKE_MICROPHONE = ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'];
const app = sharedBrowserApp({ flags: FAKE_MICROPHONE, page: {} });

const speak = (page: Page) => page.getByRole('button', { name: 'Record a message' });
const composer = (page: Page) => page.locator('#composer-text');

/** Every width and colour scheme of what the page shows now, as microphone-NAME-SIZE-SCHEME. */
async function pictures(page: Page, name: string): Promise<void> {
  for (const scheme of SCHEMES) {
    await page.emulateMedia({ colorScheme: scheme });
    for (const [size, viewport] of SIZES) {
      await page.setViewportSize(viewport);
      await screenshot(page, `microphone-${name}-${size}-${scheme}`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Records until the clock shows a second, then stops. */
async function recordASecond(page: Page): Promise<void> {
  await speak(page).click();
  await untilTrue(async () => /Recording 0:0[1-9]/.test((await page.getByRole('timer').textContent()) ?? ''), 'the recording clock to pass a second');
  await page.getByRole('button', { name: 'Stop recording' }).click();
}

/** A WAV file's format, read from the multipart body the page sent. */
function sentWav(request: Request): { channels: number; rate: number; bits: number; seconds: number } {
  const body = request.postDataBuffer()!;
  const at = body.indexOf('RIFF');
  expect(at).toBeGreaterThan(0);
  expect(body.subarray(at + 8, at + 12).toString('latin1')).toBe('WAVE');
  return {
    channels: body.readUInt16LE(at + 22),
    rate: body.readUInt32LE(at + 24),
    bits: body.readUInt16LE(at + 34),
    seconds: body.readUInt32LE(at + 40) / body.readUInt32LE(at + 28),
  };
}

describe('the microphone beside Send', () => {
  it('is off with only a text model, and says what is needed', async () => {
    const button = speak(app.page);
    await untilTrue(async () => (await button.getAttribute('aria-disabled')) === 'true', 'the microphone button to be off');
    const reason = 'Speaking needs a model that takes sound, and none here does.';
    expect(await button.getAttribute('title')).toContain(reason);
    const described = await button.getAttribute('aria-describedby');
    expect(await app.page.locator(`#${described}`).textContent()).toContain('Install one whose projector has an audio encoder');
    // A touch screen has no tooltip: a tap shows the reason under the box (the button is off to
    // assistive technology, aria-disabled, but still takes the tap; Playwright would wait for it to be on).
    await button.click({ force: true });
    await expect.poll(() => app.page.locator(`#${described}`).isVisible()).toBe(true);
    expect(await composer(app.page).inputValue()).toBe('');
    await pictures(app.page, 'off');
  });

  it('records once a model that hears is installed, with the time, and shows the companion’s refusal in process', async () => {
    await installProjectorModel(app.server.dataDir, 'audio');
    await app.page.reload();
    const button = speak(app.page);
    await untilTrue(async () => (await button.getAttribute('aria-disabled')) === 'false', 'the microphone to turn on once tiny-audio is listed');
    expect(await button.getAttribute('title')).toBe('Record a message: tiny-audio writes what you say into the box');

    await button.click();
    await app.page.getByRole('button', { name: 'Stop recording' }).waitFor();
    await pictures(app.page, 'recording');
    await untilTrue(async () => /Recording 0:0[1-9]/.test((await app.page.getByRole('timer').textContent()) ?? ''), 'the clock to pass a second');
    await app.page.getByRole('button', { name: 'Stop recording' }).click();

    const alert = app.page.getByRole('alert').filter({ hasText: 'tiny-audio' });
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(/tiny-audio takes audio only on the llama-server engine/);
    expect(await composer(app.page).inputValue()).toBe('');
    await pictures(app.page, 'refused');
  });

  it('sends the recording as a 16 kHz mono WAV and puts the transcript after what is typed', async () => {
    let sent: Request | undefined;
    await app.page.route('**/v1/audio/transcriptions', async (route) => {
      sent = route.request();
      await route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ text: ' hello from the microphone ' }) });
    });
    try {
      await composer(app.page).fill('Note:');
      await recordASecond(app.page);
      await expect.poll(() => composer(app.page).inputValue()).toBe('Note: hello from the microphone');
      const body = sent!.postDataBuffer()!.toString('latin1');
      expect(body).toMatch(/name="model"\r\n\r\ntiny-audio\r\n/);
      const wav = sentWav(sent!);
      expect(wav).toMatchObject({ channels: 1, rate: 16_000, bits: 16 });
      expect(wav.seconds).toBeGreaterThan(0.5);
      await pictures(app.page, 'transcribed');
    } finally {
      await app.page.unroute('**/v1/audio/transcriptions');
    }
  });

  it('drops a cancelled recording: nothing is sent', async () => {
    const requests: string[] = [];
    const listen = (request: Request) => void (request.url().includes('/v1/audio/transcriptions') && requests.push(request.url()));
    app.page.on('request', listen);
    await composer(app.page).fill('');
    await speak(app.page).click();
    await app.page.getByRole('button', { name: 'Cancel recording' }).click();
    await speak(app.page).waitFor();
    expect(await app.page.getByRole('button', { name: 'Stop recording' }).count()).toBe(0);
    expect(requests).toEqual([]);
    expect(await composer(app.page).inputValue()).toBe('');
    app.page.off('request', listen);
  });

  it('says so in plain words when the microphone is blocked', async () => {
    // A browser whose permission prompts are answered no, as a person refusing the microphone would.
    const browser = await launch(['--use-fake-device-for-media-stream', '--deny-permission-prompts']);
    try {
      const { page } = await open(browser, `${app.server.url}/`);
      const button = speak(page);
      await untilTrue(async () => (await button.getAttribute('aria-disabled')) === 'false', 'the microphone to turn on');
      await button.click();
      const alert = page.getByRole('alert').filter({ hasText: 'microphone' });
      await alert.waitFor();
      expect(await alert.textContent()).toBe(
        'The microphone is blocked for this page. Allow it in the browser (the icon at the left of the address bar), then try again.',
      );
      await pictures(page, 'blocked');
    } finally {
      await browser.close();
    }
  });
});
