import { Body, Controller, Get, Param, Put, Query } from '@nestjs/common';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import type { Principal } from 'src/common/auth/scopes';
import { Doc } from 'src/common/http/openapi';
import { parseQueryOrThrow, ZodPipe } from 'src/common/http/zod-validation.pipe';
import {
  spendLimitQuerySchema,
  spendLimitSchema,
  spendLimitViewSchema,
  suspensionSchema,
  suspensionViewSchema,
  type SpendLimitRequest,
  type SuspensionRequest,
} from './dto/spend-limit.dto';
import { SpendLimitsService, type SpendLimitView } from './spend-limits.service';
import { SuspensionService, type SuspensionResult } from './suspension.service';

@Controller()
export class SpendLimitsController {
  constructor(
    private readonly limits: SpendLimitsService,
    private readonly suspension: SuspensionService,
  ) {}

  @Put('v1/accounts/:id/spend-limit')
  @Access({ accountParam: 'id' })
  @Doc({
    id: 'setSpendLimit',
    summary: "Set the account's (or a member's) monthly spend limit and alert thresholds",
    description:
      'A limit lowered below what is already spent or held tells every active runtime in its scope to terminate (reason `spend_limit`).',
    tag: 'Spend limits',
    body: spendLimitSchema,
    responses: { 200: { description: 'The limit now', schema: spendLimitViewSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  set(
    @Param('id') accountId: string,
    @Body(new ZodPipe(spendLimitSchema)) body: SpendLimitRequest,
    @CurrentPrincipal() principal: Principal,
  ): Promise<SpendLimitView> {
    return this.limits.set(accountId, body, `key:${principal.keyId}`);
  }

  @Get('v1/accounts/:id/spend-limit')
  @Access('control-plane', 'reports', { accountParam: 'id' })
  @Doc({
    id: 'getSpendLimit',
    summary: "The account's (or a member's, with userId) spend limit and this month's spend",
    tag: 'Spend limits',
    query: spendLimitQuerySchema,
    responses: { 200: { description: 'The limit', schema: spendLimitViewSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  get(@Param('id') accountId: string, @Query() query: unknown): Promise<SpendLimitView> {
    const q = parseQueryOrThrow(spendLimitQuerySchema, query);
    return this.limits.get(accountId, q.userId ?? null);
  }

  @Put('v1/admin/accounts/:id/suspension')
  @Access('admin')
  @Doc({
    id: 'setSuspension',
    summary: 'Suspend an account (no new launches, runtimes terminated) or reactivate it',
    description:
      "Places or lifts an admin's suspension; with `cause: non_payment` and `suspended: false`, waives a suspension for non-payment (audited as `account.reactivated` with that cause). An account stays suspended while another cause holds it.",
    tag: 'Spend limits',
    body: suspensionSchema,
    responses: { 200: { description: 'The account status', schema: suspensionViewSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  suspend(
    @Param('id') accountId: string,
    @Body(new ZodPipe(suspensionSchema)) body: SuspensionRequest,
    @CurrentPrincipal() principal: Principal,
  ): Promise<SuspensionResult> {
    return this.suspension.set(accountId, body.suspended, body.reason ?? null, `key:${principal.keyId}`, body.cause ?? 'admin');
  }
}
