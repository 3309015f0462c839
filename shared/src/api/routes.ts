import type { RouteScope } from './access.js';

/**
 * A path's family decides how it is guarded: a key scope (`inference`, `images`, `agents`,
 * `tools`, `memory`, `metrics`; a key needs that scope, and `metrics` also answers this machine's
 * own requests without one), `admin` (the machine's owner only: loopback peer,
 * loopback Host, no proxy header, the local admin credential; a key never lifts it), `public`
 * (answered to anyone) or `web` (the app's pages and files: every path no row of ROUTE_TABLE
 * matches).
 */
export type RouteFamily = RouteScope | 'admin' | 'public' | 'web';

export interface RouteRow {
  family: Exclude<RouteFamily, 'web'>;
  /**
   * Tested against a path as the router sees it: a route pattern (`/agents/:id/run`), a decoded
   * path, or a navigation's path and query (`/health?x=1`), so a row ends at `/`, `?` or the end.
   */
  pattern: RegExp;
}

/**
 * The route table: the one place that says which family each path of the companion belongs to,
 * on the local listener and on the secure channel. The first row whose pattern matches decides,
 * so a narrower row comes before the row it narrows. The perimeter guards by it, the app's
 * request helper sends the access key by it, and the service worker and the page fallback leave
 * every path it names to the server. The route list (docs/routes.md) has one line per route.
 */
export const ROUTE_TABLE: readonly RouteRow[] = [
  { family: 'admin', pattern: /^\/admin(?:[/?]|$)/ },
  // Deciding on an agent's tool call is the machine owner's act: guarded exactly like admin routes.
  { family: 'admin', pattern: /^\/agents\/approvals(?:[/?]|$)/ },
  { family: 'images', pattern: /^\/v1\/images\// },
  { family: 'images', pattern: /^\/v1\/media\// },
  { family: 'inference', pattern: /^\/v1(?:[/?]|$)/ },
  // Ollama's API, for apps that have only an "Ollama" provider (the app itself uses no /api path).
  { family: 'inference', pattern: /^\/api(?:[/?]|$)/ },
  // llama.cpp's fill-in-the-middle route, for editors that speak to a llama-server (llama.vscode, Tabby).
  { family: 'inference', pattern: /^\/infill(?:[/?]|$)/ },
  { family: 'agents', pattern: /^\/agents(?:[/?]|$)/ },
  { family: 'tools', pattern: /^\/mcp(?:[/?]|$)/ },
  // Below /memory/ only: /memory itself is the app's Memory screen.
  { family: 'memory', pattern: /^\/memory\// },
  // GET /metrics (Prometheus): this machine's own requests without a key, anyone else with the metrics scope.
  { family: 'metrics', pattern: /^\/metrics(?:[/?]|$)/ },
  { family: 'public', pattern: /^\/health(?:[/?]|$)/ },
  // The secure channel's pairing route (that listener only): the one-time code is the proof.
  { family: 'public', pattern: /^\/pair(?:[/?]|$)/ },
];
