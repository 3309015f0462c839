import type { FastifyInstance } from 'fastify';

/**
 * The one shape of a route module: a Fastify plugin that receives its family's context
 * (`routes/contexts.ts`), narrowed to the members it uses. `RoutePlugin<AdminContext, 'keys'>`
 * is a module of the admin family that uses only `keys`; a family file (openai.ts, admin.ts, ...)
 * is a `RoutePlugin<FamilyContext>` and registers its parts with `registerParts`.
 * Each part validates, calls one domain function, and converts the result.
 */
export type RoutePlugin<Context, Used extends keyof Context = keyof Context> = (app: FastifyInstance, context: Pick<Context, Used>) => Promise<void>;

/** Registers a family's parts in order, each given the whole family context (a part reads only its members). */
export async function registerParts<Context extends object>(
  app: FastifyInstance,
  context: Context,
  parts: readonly ((app: FastifyInstance, context: Context) => Promise<void>)[],
): Promise<void> {
  for (const part of parts) await app.register(part, context);
}

/** Gives every route the family registers after this call a default body limit (a route's own limit wins). */
export function defaultBodyLimit(app: FastifyInstance, bytes: number): void {
  app.addHook('onRoute', (route) => void (route.bodyLimit ??= bytes));
}
