import adapter from '@sveltejs/adapter-static';
import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';
import { readFileSync } from 'node:fs';

const { version } = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8'));

/** @type {import('@sveltejs/kit').Config} */
const config = {
  preprocess: vitePreprocess(),
  kit: {
    adapter: adapter({ pages: 'build/web', assets: 'build/web', fallback: '200.html' }),
    files: { src: 'web/src', assets: 'web/static' },
    paths: { relative: false },
    // A stable name: a rebuild of the same sources must not announce an update.
    version: { name: version },
    // The service worker comes from @vite-pwa/sveltekit (vite.config.ts).
    serviceWorker: { register: false },
  },
};

export default config;
