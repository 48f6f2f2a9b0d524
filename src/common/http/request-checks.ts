import type { FastifyInstance, FastifyRequest, HTTPMethods } from 'fastify';
import { BillingException } from '../errors/billing.exception';

/** The methods a route of the service may have (HEAD is served for every GET). */
const METHODS: HTTPMethods[] = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * Checks made before authentication and before a body is read, as Fastify's own 404, 413 and
 * 415 are: a known path with the wrong method is a 405 (with `Allow`), and a body sent to the JSON
 * API (/v1) must be JSON. Errors go through the global filter, so their bodies are the contract's.
 */
export function registerRequestChecks(fastify: FastifyInstance): void {
  // A callback hook, not an async one: it runs on every request and rarely has anything to say.
  fastify.addHook('onRequest', (request, reply, done) => {
    if (request.is404) {
      const allowed = METHODS.filter((method) => routeExists(fastify, method, request.url));
      if (allowed.length === 0) return done(); // an unknown path: Nest's 404
      void reply.header('allow', allowed.join(', '));
      return done(
        new BillingException(
          'DL_BILLING_METHOD_NOT_ALLOWED',
          `Method ${request.method} is not allowed here (allowed: ${allowed.join(', ')})`,
          [{ field: 'method', message: `must be one of ${allowed.join(', ')}` }],
        ),
      );
    }
    if (request.routeOptions.url?.startsWith('/v1/') && hasBody(request)) {
      const refused = nonJson(request.headers['content-type']);
      if (refused) {
        return done(
          new BillingException('DL_BILLING_UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON', [
            { field: 'content-type', message: refused },
          ]),
        );
      }
    }
    done();
  });
}

function routeExists(fastify: FastifyInstance, method: HTTPMethods, url: string): boolean {
  try {
    return fastify.findRoute({ method, url }) !== null;
  } catch {
    return false; // a URL the router cannot decode matches no route
  }
}

/** As Fastify decides whether to parse one: a body is announced by its length or by chunked transfer. */
function hasBody(request: FastifyRequest): boolean {
  if (request.method === 'GET' || request.method === 'HEAD') return false; // Fastify never reads their bodies
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && Number(length) !== 0);
}

/**
 * Why a content type is not JSON, or undefined when it is: `application/json`, in UTF-8 (RFC 8259)
 * when a charset is named. `application/*+json` types are refused: none of their semantics (e.g. a
 * merge patch) is implemented, so taking them as plain JSON would mislead the client.
 */
export function nonJson(contentType: string | undefined): string | undefined {
  if (contentType === undefined || contentType.trim() === '') return 'is required with a body: application/json';
  const [type = '', ...params] = contentType.split(';');
  const mediaType = type.trim().toLowerCase().slice(0, 100);
  if (mediaType !== 'application/json') return `must be application/json, not ${mediaType || 'empty'}`;
  for (const param of params) {
    const [name = '', value = ''] = param.split('=', 2).map((part) => part.trim());
    const charset = value
      .replace(/^"(.*)"$/, '$1')
      .toLowerCase()
      .slice(0, 100);
    if (name.toLowerCase() === 'charset' && charset !== 'utf-8' && charset !== 'utf8') {
      return `charset must be utf-8, not ${charset || 'empty'}`;
    }
  }
  return undefined;
}
