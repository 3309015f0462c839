import { sveltekit } from '@sveltejs/kit/vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { SvelteKitPWA } from '@vite-pwa/sveltekit';
import { fileURLToPath } from 'node:url';
import type { Plugin } from 'vite';
import { defineConfig } from 'vitest/config';
import { ROUTE_TABLE } from '#shared/api/routes.js';

const theme = '#b3431d';
const background = '#1f1a17';

/** Paths the companion answers itself (every row of the route table); a navigation there must reach the network. */
const apiPaths = ROUTE_TABLE.map((route) => route.pattern);

const pwa = SvelteKitPWA({
  strategies: 'generateSW',
  registerType: 'prompt',
  kit: { adapterFallback: '200.html', spa: true },
  manifest: {
    name: 'Hearth',
    short_name: 'Hearth',
    description: 'A local AI companion.',
    start_url: '/',
    scope: '/',
    display: 'standalone',
    theme_color: theme,
    background_color: background,
    icons: [
      { src: '/icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any' },
      { src: '/icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any' },
      { src: '/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
    ],
  },
  workbox: {
    globPatterns: ['client/**/*.{js,css,ico,png,svg,webp,woff2,wasm,webmanifest}', 'prerendered/**/*.{html,json}'],
    // In-browser engines ship multi-megabyte chunks and wasm; they must be precached for offline use.
    maximumFileSizeToCacheInBytes: 32 * 1024 * 1024,
    // The first visit is offline-capable at once; later versions still wait for the user (prompt).
    clientsClaim: true,
    navigateFallback: '/200.html',
    navigateFallbackDenylist: apiPaths,
  },
});

/** Tests of the llama-server engine itself: they need its build. */
const serverEngineOnly = ['tests/companion/inference/server-*.test.ts', 'tests/companion/inference/draft*.test.ts', 'tests/e2e/server-engine-*.test.ts'];
/** Generation tests that run on both engines: in process in the companion project, on llama-server here. */
const generationFiles = [
  'tests/e2e/chat.test.ts',
  'tests/e2e/forced-calls.test.ts',
  'tests/e2e/structured-output.test.ts',
  'tests/e2e/responses.test.ts',
  'tests/e2e/cancel.test.ts',
  'tests/e2e/shutdown.test.ts',
  'tests/companion/agents/local-model.test.ts',
  'tests/companion/memory/tiny-model.test.ts',
  'tests/companion/inference/raw.test.ts',
  'tests/e2e/completions.test.ts',
  'tests/companion/inference/reasoning.test.ts',
  'tests/e2e/reasoning.test.ts',
  'tests/e2e/anthropic.test.ts',
  'tests/e2e/ollama.test.ts',
  'tests/e2e/vision.test.ts',
  'tests/e2e/tool-images.test.ts',
  'tests/companion/agents/images.test.ts',
];

/** Builds build/companion when stale, so the `hearth` processes the tests start skip compiling TypeScript. */
const COMPANION_BUILD = 'tests/helpers/companion-build.ts';

const path = (relative: string) => fileURLToPath(new URL(relative, import.meta.url));
/** How long expect.poll waits for a condition in every test project (see `test` below). */
const PATIENT = { poll: { timeout: 20_000 } };
/**
 * Test files run two at a time in every project: the suite's files mostly wait on processes they
 * start (servers, engines, Chromium), so two lanes keep both cores of a small machine busy. The
 * tests themselves must pass on a loaded machine anyway (no wall-clock assertions, patient polls).
 */
const WORKERS = 2;

/**
 * `virtual:webllm-models`: web-llm's prebuilt chat models (what the Models screen lists), read
 * from the installed package at build time, so listing them never loads web-llm (~6 MB) in the
 * browser; web-llm itself is loaded only to check a model that has files cached, or to run one.
 */
function webllmModels(): Plugin {
  const id = 'virtual:webllm-models';
  return {
    name: 'hearth-webllm-models',
    resolveId: (source) => (source === id ? `\0${id}` : undefined),
    async load(resolved) {
      if (resolved !== `\0${id}`) return undefined;
      const { prebuiltAppConfig } = await import('@mlc-ai/web-llm');
      const models = prebuiltAppConfig.model_list
        .filter((record) => record.model_type === undefined || record.model_type === 0)
        .map((record) => ({
          model: record.model,
          model_id: record.model_id,
          vram_required_MB: record.vram_required_MB ?? null,
          required_features: record.required_features ?? [],
        }));
      return `export const cacheBackend = ${JSON.stringify(prebuiltAppConfig.cacheBackend ?? 'cache')};\nexport default ${JSON.stringify(models)};\n`;
    },
  };
}

export default defineConfig({
  plugins: [sveltekit(), pwa, webllmModels()],
  // ES workers can split: web-llm (~6 MB) loads only where WebGPU is present.
  worker: { format: 'es', plugins: () => [webllmModels()] },
  test: {
    // expect.poll gives up after 1 s by default: too soon on a loaded 2-core machine, so every
    // project waits up to 20 s (PATIENT) for a condition, and passes as soon as it holds.
    projects: [
      {
        test: {
          name: 'companion',
          environment: 'node',
          expect: PATIENT,
          include: ['tests/companion/**/*.test.ts', 'tests/e2e/**/*.test.ts', 'tests/scripts/**/*.test.ts', 'tests/shared/**/*.test.ts'],
          exclude: serverEngineOnly,
          // The in-process engine here; the server-engine project runs the generation files again on llama-server.
          env: { HEARTH_ENGINE: 'in-process' },
          maxWorkers: WORKERS,
          globalSetup: [COMPANION_BUILD],
          setupFiles: ['tests/helpers/clone-path.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'server-engine',
          environment: 'node',
          expect: PATIENT,
          include: [...serverEngineOnly, ...generationFiles],
          env: { HEARTH_ENGINE: 'server' },
          // Builds llama-server once (cached outside the clone) unless it is built.
          globalSetup: ['tests/helpers/engine-build.ts', COMPANION_BUILD],
          maxWorkers: WORKERS,
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        plugins: [svelte()],
        resolve: {
          conditions: ['browser'],
          alias: { $lib: path('web/src/lib') },
        },
        test: {
          name: 'web',
          environment: 'jsdom',
          maxWorkers: WORKERS,
          expect: PATIENT,
          testTimeout: 30_000,
          include: ['tests/web/**/*.test.ts'],
          setupFiles: ['tests/web/setup.ts'],
        },
      },
      {
        test: {
          name: 'browser',
          environment: 'node',
          expect: PATIENT,
          include: ['tests/browser/**/*.test.ts'],
          // Real Chromium, real `hearth serve`, real wllama: after the other projects, so their
          // CPU-heavy tests never share the machine with a browser.
          env: { HEARTH_ENGINE: 'in-process' },
          maxWorkers: WORKERS,
          sequence: { groupOrder: 1 },
          globalSetup: ['tests/browser/global-setup.ts', COMPANION_BUILD],
          setupFiles: ['tests/helpers/clone-path.ts'],
          testTimeout: 180_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
