import type { FastifyRequest } from 'fastify';
import type { Principal } from '../auth/scopes';

/**
 * What a request's access line and metrics say of it beyond its route and status: the key that made
 * it and the contract error code it was answered with. The API key guard notes the key of an API
 * request and a JSON error body gives its code as it is sent; the admin console notes its session's
 * key and the code of an HTML error page here.
 */
const codes = new WeakMap<FastifyRequest, string>();

export function noteErrorCode(request: FastifyRequest, code: string): void {
  codes.set(request, code);
}

export function errorCodeOf(request: FastifyRequest): string | undefined {
  return codes.get(request);
}

export function notePrincipal(request: FastifyRequest, principal: Principal): void {
  (request as FastifyRequest & { principal?: Principal }).principal = principal;
}

export function principalOf(request: FastifyRequest): Principal | undefined {
  return (request as FastifyRequest & { principal?: Principal }).principal;
}
