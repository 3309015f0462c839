/**
 * Every `hearth` the tests start (hundreds of them) runs the companion compiled ahead into
 * build/companion, as `npm start` does, instead of compiling the TypeScript sources through tsx
 * at each start (about half the CPU time of a start). Built here once per run when stale;
 * bin/hearth.js still runs the sources whenever one is newer than the build, so an edit made
 * while the tests run is never hidden. tests/e2e/bundle.test.ts starts Hearth from the sources too.
 */
import { buildBundle, bundleIsFresh } from '../../scripts/companion-bundle.js';

/** One build for every project that names this set-up (they share the process). */
const shared = globalThis as { hearthCompanionBuild?: Promise<void> };

export default async function setup(): Promise<void> {
  shared.hearthCompanionBuild ??= bundleIsFresh() ? Promise.resolve() : buildBundle();
  await shared.hearthCompanionBuild;
}
