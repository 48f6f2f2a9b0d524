import { createParamDecorator, SetMetadata, type ExecutionContext } from '@nestjs/common';
import type { Principal, Requirement } from './scopes';

export const PUBLIC_KEY = 'dl:public';
export const ACCESS_KEY = 'dl:access';

/** No API key needed (health, metrics, docs, Stripe webhooks). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_KEY, true);

/** Who may call: scopes, or `{accountParam}` for the key of the account named in that path parameter. Admin always may. */
export const Access = (...requirements: Requirement[]): MethodDecorator & ClassDecorator => SetMetadata(ACCESS_KEY, requirements);

export const CurrentPrincipal = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): Principal => ctx.switchToHttp().getRequest<{ principal: Principal }>().principal,
);
