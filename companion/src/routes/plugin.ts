import type { FastifyInstance } from 'fastify';

/**
 * The one shape of a route module: a Fastify plugin that receives its family's context
 * (`routes/contexts.ts`), narrowed to the members it uses. `RoutePlugin<AdminContext, 'keys'>`
 * is a module of the admin family that uses only `keys`; a family file (openai.ts, admin.ts, ...)
 * is a `RoutePlugin<FamilyContext>` and registers its parts with `app.register(part, context)`.
 * Each part validates, calls one domain function, and converts the result.
 */
export type RoutePlugin<Context, Used extends keyof Context = keyof Context> = (app: FastifyInstance, context: Pick<Context, Used>) => Promise<void>;
