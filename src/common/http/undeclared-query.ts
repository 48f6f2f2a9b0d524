import type { ExecutionContext } from '@nestjs/common';
import { BillingException } from '../errors/billing.exception';
import { docEntries } from './openapi';

/** The documented routes' handlers that take no query parameters (read once the controllers are loaded). */
let withoutQuery: Set<object> | undefined;

/**
 * A documented route that takes no query parameters refuses any (400, a finding on each name: `is
 * not a parameter of this endpoint`), as the routes that take some refuse the others. Called by the
 * API-key guard once the request may proceed, so that an unauthenticated request is still a 401 (a
 * guard, not an interceptor: nothing more is wrapped around every request).
 */
export function refuseUndeclaredQuery(context: ExecutionContext): void {
  withoutQuery ??= new Set(
    docEntries()
      .filter((e) => !e.spec.query)
      .map((e) => e.handler),
  );
  if (!withoutQuery.has(context.getHandler())) return;
  const query = context.switchToHttp().getRequest<{ query?: Record<string, unknown> }>().query;
  const names = query ? Object.keys(query) : [];
  if (names.length > 0) {
    throw BillingException.invalid(names.map((name) => ({ field: name, message: 'is not a parameter of this endpoint' })));
  }
}
