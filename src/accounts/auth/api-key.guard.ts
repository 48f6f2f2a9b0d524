import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { BillingException } from '../../common/errors/billing.exception';
import { ACCESS_KEY, PUBLIC_KEY } from './auth.decorators';
import { ApiKeysService } from './api-keys.service';
import { isAllowed, type Principal, type Requirement } from './scopes';

interface AuthedRequest {
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
  ) {}

  async canActivate(ctx: ExecutionContext): Promise<boolean> {
    const targets = [ctx.getHandler(), ctx.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_KEY, targets)) return true;
    const request = ctx.switchToHttp().getRequest<AuthedRequest>();
    const header = request.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) {
      throw new BillingException('DL_BILLING_UNAUTHENTICATED', 'An API key is required: Authorization: Bearer <key>');
    }
    const principal = await this.keys.authenticate(match[1]);
    if (!principal) throw new BillingException('DL_BILLING_UNAUTHENTICATED', 'The API key is unknown or revoked');
    request.principal = principal;
    const requirements = this.reflector.getAllAndOverride<Requirement[] | undefined>(ACCESS_KEY, targets) ?? [];
    if (!isAllowed(principal, requirements, request.params ?? {})) {
      throw new BillingException('DL_BILLING_FORBIDDEN', 'The API key does not allow this request');
    }
    return true;
  }
}
