import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * JSON bodies, parsed as Fastify does (prototype-poisoning checks included), except that an empty
 * body on a route that takes none is no body: clients send `Content-Type: application/json` on
 * every request, with no body on a DELETE or a cancel (openai-python's `responses.delete`, the MCP
 * Python SDK's session close). A route that takes a body still answers an empty one with 400.
 */
export function installJsonBodies(app: FastifyInstance): void {
  const { onProtoPoisoning, onConstructorPoisoning } = app.initialConfig;
  const parse = app.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body.length === 0 && !takesBody(request)) {
      done(null, undefined);
      return;
    }
    parse(request, body as string, done);
  });
}

/** A route takes a JSON body when its schema declares one. */
function takesBody(request: FastifyRequest): boolean {
  return request.routeOptions.schema?.body !== undefined;
}
