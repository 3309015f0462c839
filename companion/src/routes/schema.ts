/**
 * The one way a route declares what it accepts. Its schemas (body, params, querystring) are
 * JSON Schema literals at the top of the route module, exported, `as const`; a body's schema is
 * also `satisfies BodySchema<Wire>`, where `Wire` is the request's type from `#shared/api/`.
 * Fastify checks JSON bodies with it; a multipart form's text fields go through the same schema
 * once read (routes/multipart.ts). Either way a problem is told in the same words
 * (http/error-handler.ts).
 */

/** A JSON Schema, as Fastify's Ajv compiles it. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/**
 * The schema of a request body of the wire type `Wire`: it has a schema for every field of
 * `Wire` and no other (the compiler checks the top level; tests/shared/schemas-match-types.test.ts
 * checks every depth, and that every body a route declares is one of these).
 */
export type BodySchema<Wire> = JsonSchema & {
  readonly properties: { readonly [Field in keyof Required<NonNullable<Wire>>]: JsonSchema };
};

/** A number within bounds, or null (OpenAI's optional sampling settings). */
export const nullableNumber = (minimum: number, maximum: number) => ({ type: ['number', 'null'], minimum, maximum });

/**
 * The schema of a request body that has exactly these fields, each required, and no other (an
 * action that takes a code, a secret, a text); `satisfies BodySchema<Wire>` still goes with it.
 */
export const requiredBody = <Properties extends Readonly<Record<string, JsonSchema>>>(properties: Properties) =>
  ({ type: 'object', required: Object.keys(properties), additionalProperties: false, properties }) as const;

/** A string of at least one character (and at most `maxLength` when given). */
export const nonEmptyString = (maxLength?: number) => ({ type: 'string', minLength: 1, ...(maxLength === undefined ? {} : { maxLength }) }) as const;

/** A list of at least one item (a conversation's messages). */
export const nonEmptyArray = <Items extends JsonSchema>(items: Items) => ({ type: 'array', minItems: 1, items }) as const;

/** The schema of a route's path parameters: each one named is required. */
export const pathParams = <Properties extends Readonly<Record<string, JsonSchema>>>(properties: Properties) =>
  ({ type: 'object', required: Object.keys(properties), properties }) as const;

/** A name a person chose (an MCP service, a paired host, a cloud workspace) or a short id: 1 to 64 characters. */
export const shortName = { type: 'string', minLength: 1, maxLength: 64 } as const;

/** An id Hearth made, with its prefix (`run_…`, `appr_…`). */
export const prefixedId = (prefix: string) => ({ type: 'string', pattern: `^${prefix}_[A-Za-z0-9_-]{1,64}$` }) as const;
