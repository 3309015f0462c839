import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { problemAt, schemaMessage } from '../schema-messages.js';

/** One problem with a tool's arguments: where (`arguments.path`) and what. */
export interface ArgumentProblem {
  path: string;
  message: string;
}

export type ArgumentValidator = (value: unknown) => ArgumentProblem[];

/**
 * Compiles tool schemas with the JSON Schema draft they declare (draft-07 when they declare
 * none). Formats are not checked: they are annotations many services use loosely. One instance
 * per connection, so a reconnect drops every schema the previous one compiled.
 */
export class SchemaCompiler {
  private readonly options = { strict: false, allErrors: true, validateFormats: false } as const;
  private draft7?: Ajv;
  private draft2019?: Ajv2019;
  private draft2020?: Ajv2020;

  /** Throws when the schema is not a usable JSON Schema for an argument object. */
  compile(schema: unknown): ArgumentValidator {
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('the schema is not an object');
    const object = schema as Record<string, unknown>;
    if (object.type !== 'object') throw new Error(`the argument schema must have type "object", not ${JSON.stringify(object.type)}`);
    const validate = this.instanceFor(object.$schema).compile(object) as ValidateFunction;
    return (value) => (validate(value) ? [] : (validate.errors ?? []).map(describe));
  }

  private instanceFor(draft: unknown): Ajv | Ajv2019 | Ajv2020 {
    const text = typeof draft === 'string' ? draft : '';
    if (text.includes('2020-12')) return (this.draft2020 ??= new Ajv2020(this.options));
    if (text.includes('2019-09')) return (this.draft2019 ??= new Ajv2019(this.options));
    return (this.draft7 ??= new Ajv(this.options));
  }
}

function describe(error: ErrorObject): ArgumentProblem {
  const { path, message } = problemAt(error, schemaMessage(error), 'argument');
  return { path: path ? `arguments.${path}` : 'arguments', message };
}
