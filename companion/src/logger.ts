/** The logging surface domain code may use; Fastify's pino logger satisfies it. */
export interface Logger {
  info(object: object | string, message?: string): void;
  warn(object: object | string, message?: string): void;
  error(object: object | string, message?: string): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
