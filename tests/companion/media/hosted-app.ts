/** A companion with hosted media pointed at the video fixture, and the calls the media tests make. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { startVideoFixture, type VideoFixture, type VideoFixtureOptions } from '../../fixtures/media/openai-videos.js';
import { testApp } from '../../helpers/app.js';
import { perFile } from '../../helpers/per-file.js';
import { newDataDir } from '../../helpers/server.js';
import { until as untilValue } from '../../helpers/until.js';

export const VIDEO_TOKEN = 'sk-test-video-0123456789';
process.env.HEARTH_TEST_VIDEO_KEY = VIDEO_TOKEN;

/** config.yaml with one media provider at `url` (sora-2 at $0.10 a second). */
export function hostedConfig(url: string, budget = 1, enabled = true): string {
  return `version: 1
images:
  hosted: { enabled: ${enabled}, monthly_budget_usd: ${budget} }
media_providers:
  - name: videos
    base_url: ${url}
    api_key: env:HEARTH_TEST_VIDEO_KEY
    quote_ttl_seconds: 60
    poll_interval_seconds: 0.05
    models:
      - { id: sora-2, usd_per_second: 0.1, seconds: [4, 8, 12], sizes: ['720x1280', '1280x720'] }
`;
}

export type HostedApp = Awaited<ReturnType<typeof testApp>> & { dataDir: string };
export type App = HostedApp['app'];

/** The app on a data folder (a new one unless given) with `config` written into it; closed by the caller. */
export async function startHosted(config: string, dataDir?: string): Promise<HostedApp> {
  const dir = dataDir ?? (await newDataDir(false));
  writeFileSync(join(dir, 'config.yaml'), config);
  return { ...(await testApp({ dataDir: dir })), dataDir: dir };
}

const headersOf = (key?: string) => (key ? { authorization: `Bearer ${key}` } : {});

export const post = (app: App, url: string, payload: object, key?: string) => app.inject({ method: 'POST', url, payload, headers: headersOf(key) });
export const get = (app: App, url: string, key?: string) => app.inject({ method: 'GET', url, headers: headersOf(key) });

export const quoteOf = (app: App, extra: object = {}, key?: string) =>
  post(
    app,
    '/v1/media/quotes',
    { provider: 'videos', operation: 'video.generate', prompt: 'A hearth fire at dusk', seconds: 8, size: '720x1280', ...extra },
    key,
  );

/** Quote then confirm; the job as answered. */
export async function confirmNew(app: App, extra: object = {}): Promise<any> {
  const quote = (await quoteOf(app, extra)).json();
  return (await post(app, '/v1/media/jobs', { quote_id: quote.id, confirm: true })).json();
}

export const spent = async (app: App): Promise<number> => (await get(app, '/v1/media/providers')).json().budget.spent_usd;

/** Waits (polling, see helpers/until) for the job to reach `status`. */
export async function until(app: App, id: string, status: string): Promise<any> {
  let job: any;
  return untilValue(
    async () => ((job = (await get(app, `/v1/media/jobs/${id}`)).json()).status === status ? job : undefined),
    () => `job ${id} to be ${status}; it stayed ${job?.status}: ${JSON.stringify(job)}`,
  );
}

/**
 * The video fixture and the apps a media test file opens. The fixture starts before the first test
 * and closes after the last; after every test the apps opened are closed and the fixture is put
 * back as it started (no requests, no videos, its first options).
 */
export function videoProvider(): {
  readonly fixture: VideoFixture;
  /** An app with this config.yaml (on a new data folder unless given), closed after the test. */
  open(config: string, dataDir?: string): Promise<HostedApp>;
  /** Closes an app before the test ends (a restart). */
  close(app: HostedApp): Promise<void>;
} {
  const shared = perFile(
    'The video fixture',
    async () => {
      const fixture = await startVideoFixture({ token: VIDEO_TOKEN });
      return { fixture, initial: { ...fixture.options } };
    },
    ({ fixture }) => fixture.close(),
  );
  const opened: HostedApp[] = [];
  afterEach(async () => {
    for (const app of opened.splice(0)) await app.close();
    if (!shared.started) return;
    const { fixture, initial } = shared.value;
    fixture.requests.length = 0;
    fixture.videos.clear();
    for (const key of Object.keys(fixture.options)) delete fixture.options[key as keyof VideoFixtureOptions];
    Object.assign(fixture.options, initial);
  });
  return {
    get fixture() {
      return shared.value.fixture;
    },
    async open(config, dataDir) {
      const app = await startHosted(config, dataDir);
      opened.push(app);
      return app;
    },
    async close(app) {
      opened.splice(opened.indexOf(app), 1);
      await app.close();
    },
  };
}
