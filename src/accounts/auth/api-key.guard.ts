import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { BillingException } from 'src/common/errors/billing.exception';
import { ApiKeyFailures } from './failure-limiter';
import { ACCESS_KEY, PUBLIC_KEY } from 'src/common/auth/auth.decorators';
import { ApiKeysService } from './api-keys.service';
import { isAllowed, type Principal, type Requirement } from 'src/common/auth/scopes';
import { refuseUndeclaredQuery } from 'src/common/http/undeclared-query';

interface AuthedRequest {
  ip?: string;
  headers: Record<string, string | string[] | undefined>;
  params?: Record<string, string>;
  principal?: Principal;
}

/** Every route needs a valid API key with a fitting scope, unless it is marked @Public(). */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly keys: ApiKeysService,
    /** Failed authentications per client, shared by the instances (AUTH_FAILURES_PER_MINUTE). */
    private readonly limiter: ApiKeyFailures,
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)) {
      refuseUndeclaredQuery(ctx);
      return true;
    }
    const request = ctx.switchToHttp().getRequest<AuthedRequest>();
    const client = request.ip;
    const wait = await this.limiter.retryAfter(client);
    if (wait > 0) {
      throw new BillingException('DL_BILLING_RATE_LIMITED', 'Too many failed authentications: try again later', [], {
        retryAfterSeconds: wait,
      });
    }
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) {
      await this.limiter.fail(client);
      throw new BillingException('DL_BILLING_UNAUTHENTICATED', 'An API key is required: Authorization: Bearer <key>');
    }
    const principal = await this.keys.authenticate(match[1]);
    if (!principal) {
      await this.limiter.fail(client);
      throw new BillingException('DL_BILLING_UNAUTHENTICATED', 'The API key is unknown or revoked');
    }
    request.principal = principal;
    const requirements = this.reflector.getAllAndOverride<Requirement[] | undefined>(ACCESS_KEY, targets) ?? [];
    if (!isAllowed(principal, requirements, request.params ?? {})) {
      throw new BillingException('DL_BILLING_FORBIDDEN', 'The API key does not allow this request');
    }
    refuseUndeclaredQuery(ctx);
    return true;
  }
}
