import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { z } from 'zod';
import { Access, CurrentPrincipal } from '../accounts/auth/auth.decorators';
import type { Principal } from '../accounts/auth/scopes';
import { Doc } from '../common/http/openapi';
import { parseOrThrow, ZodPipe } from '../common/http/zod-validation.pipe';
import { spendLimitSchema, suspensionSchema, type SpendLimitRequest, type SuspensionRequest } from './dto/spend-limit.dto';
import { SpendLimitsService, type SpendLimitView } from './spend-limits.service';
import { SuspensionService } from './suspension.service';

@Controller()
export class SpendLimitsController {
  constructor(
    private readonly limits: SpendLimitsService,
    private readonly suspension: SuspensionService,
  ) {}

  @Put('v1/accounts/:id/spend-limit')
  @Access({ accountParam: 'id' })
  @Doc("Set the account's (or a member's) monthly spend limit and alert thresholds", spendLimitSchema)
  set(
    @Param('id') accountId: string,
    @Body(new ZodPipe(spendLimitSchema)) body: SpendLimitRequest,
    @CurrentPrincipal() principal: Principal,
  ): Promise<SpendLimitView> {
    return this.limits.set(accountId, body, `key:${principal.keyId}`);
  }

  @Get('v1/accounts/:id/spend-limit')
  @Access('control-plane', 'reports', { accountParam: 'id' })
  @Doc("The account's (or a member's, with ?userId=) spend limit and this month's spend")
  get(@Param('id') accountId: string, @Query() query: unknown): Promise<SpendLimitView> {
    const q = parseOrThrow(z.strictObject({ userId: z.string().min(1).max(128).optional() }), query);
    return this.limits.get(accountId, q.userId ?? null);
  }

  @Put('v1/admin/accounts/:id/suspension')
  @Access('admin')
  @Doc('Suspend an account (no new launches, runtimes terminated) or reactivate it', suspensionSchema)
  suspend(
    @Param('id') accountId: string,
    @Body(new ZodPipe(suspensionSchema)) body: SuspensionRequest,
    @CurrentPrincipal() principal: Principal,
  ): Promise<{ accountId: string; status: string; terminated: string[] }> {
    return this.suspension.set(accountId, body.suspended, body.reason ?? null, `key:${principal.keyId}`);
  }
}
