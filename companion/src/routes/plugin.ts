import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.js';

/** What every route plugin receives. */
export interface RouteOptions {
  services: Services;
  /** Folder of the built PWA (build/web), served at /. */
  webRoot: string;
}

/**
 * The one shape of a route module: a Fastify plugin. A family file (openai.ts, admin.ts, ...)
 * registers its parts with `app.register(part, options)`; each part validates, calls one domain
 * function, and converts the result.
 */
export type RoutePlugin = (app: FastifyInstance, options: RouteOptions) => Promise<void>;
