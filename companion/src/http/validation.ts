/**
 * How request schemas are applied, for every listener.
 *
 * Clients must get a 400 for a wrong type, not a silent coercion of "5" into 5: nothing is coerced,
 * removed or filled in (`VALIDATION`).
 *
 * A route's schemas are compiled when it first validates a request, not when the listener starts
 * (`lazyValidators`): compiling every route's schemas with Ajv took about 0.7 s of CPU at every
 * start (and in every test that builds the app), though most routes are never called in a session.
 * The compiler and its options are Fastify's own (`@fastify/ajv-compiler`), so a schema validates
 * exactly as before. `tests/companion/http/validation.test.ts` compiles every route's schemas at
 * start-up, so a schema Ajv refuses still fails a test.
 */
import { AjvCompiler } from '@fastify/ajv-compiler';

export const VALIDATION = { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } } as const;

type BuildValidator = ReturnType<typeof AjvCompiler>;
type RouteCompiler = ReturnType<BuildValidator>;
type Validate = ReturnType<RouteCompiler>;

/** Fastify's `compilersFactory.buildValidator`, compiling each route's schema on its first request. */
export function lazyValidators(): BuildValidator {
  const pool = AjvCompiler();
  return (externalSchemas, options) => {
    const compile = pool(externalSchemas, options);
    return (route) => {
      let validate: Validate | undefined;
      const lazy = ((data: unknown) => {
        validate ??= compile(route);
        const valid = validate(data);
        lazy.errors = validate.errors;
        return valid;
      }) as Validate;
      return lazy;
    };
  };
}
