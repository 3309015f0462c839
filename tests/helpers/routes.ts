import { readFileSync } from 'node:fs';
import type { FastifyInstance, HTTPMethods } from 'fastify';

export interface ListedRoute {
  method: string;
  /** As Fastify registered it: `/agents/:id/run`, `/v1/models/*`. */
  url: string;
}

/**
 * Every route of an app, read from `app.printRoutes({ commonPrefix: false })`: one line per
 * leaf, indented four characters per level, `label (METHOD, METHOD)`, each label continuing its
 * parent's path. Every route read is confirmed with `hasRoute`, so a misread line fails loudly.
 * HEAD routes Fastify adds beside each GET are left out (every GET answers HEAD).
 */
export function appRoutes(app: FastifyInstance): ListedRoute[] {
  const paths: string[] = [];
  const routes: ListedRoute[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^(.*?[├└]── )(.+) \(([A-Z, ]+)\)$/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4 - 1;
    const label = match[2]!;
    const parent = depth === 0 ? '' : paths[depth - 1]!;
    const methods = match[3]!.split(', ');
    let url = parent + label;
    // find-my-way prints a wildcard child without the "/" before it (`/v1/models` + `*`).
    if (!app.hasRoute({ method: methods[0] as HTTPMethods, url }) && label.startsWith('*')) url = `${parent}/${label}`;
    paths[depth] = url;
    for (const method of methods) {
      if (!app.hasRoute({ method: method as HTTPMethods, url }))
        throw new Error(`printRoutes line not understood: ${JSON.stringify(line)} (read as ${method} ${url})`);
      if (method === 'HEAD' && methods.includes('GET')) continue;
      routes.push({ method, url });
    }
  }
  if (routes.length === 0) throw new Error(`No routes read from printRoutes:\n${app.printRoutes({ commonPrefix: false })}`);
  return routes;
}

/** A route as the docs write it: parameters in braces (`/agents/{id}/run`). */
export function documentedPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

export interface DocumentedRoute {
  section: string;
  method: string;
  path: string;
  family: string;
  line: number;
}

/**
 * The rows of the route tables of a Markdown page: `| \`METHOD\` | \`/path\` | family | what |`,
 * each under the last `## ` heading above it.
 */
export function documentedRoutes(file: string): DocumentedRoute[] {
  let section = '';
  const rows: DocumentedRoute[] = [];
  for (const [index, text] of readFileSync(file, 'utf8').split('\n').entries()) {
    if (text.startsWith('## ')) section = text.slice(3).trim();
    const match = /^\| `([A-Z]+)` \| `([^`]+)` \| (\w+) \|/.exec(text);
    if (match) rows.push({ section, method: match[1]!, path: match[2]!, family: match[3]!, line: index + 1 });
  }
  return rows;
}
