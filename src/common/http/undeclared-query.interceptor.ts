import { Injectable, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { BillingException } from '../errors/billing.exception';
import { docEntries } from './openapi';

/**
 * A documented route that takes no query parameters refuses any (400, a finding on each name: `is
 * not a parameter of this endpoint`), as the routes that take some refuse the others; after the
 * guards, so that an unauthenticated request is still a 401.
 */
@Injectable()
export class UndeclaredQueryInterceptor implements NestInterceptor {
  private withoutQuery?: Set<object>;

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() === 'http') {
      this.withoutQuery ??= new Set(
        docEntries()
          .filter((e) => !e.spec.query)
          .map((e) => e.handler),
      );
      if (this.withoutQuery.has(context.getHandler())) {
        const query = (context.switchToHttp().getRequest<{ query?: Record<string, unknown> }>().query ?? {}) as Record<string, unknown>;
        const names = Object.keys(query);
        if (names.length > 0) {
          throw BillingException.invalid(names.map((name) => ({ field: name, message: 'is not a parameter of this endpoint' })));
        }
      }
    }
    return next.handle();
  }
}
