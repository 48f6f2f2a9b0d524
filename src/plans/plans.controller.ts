import { Body, Controller, Get, Param, Put, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import type { Principal } from 'src/common/auth/scopes';
import { Doc } from 'src/common/http/openapi';
import { parseOrThrow } from 'src/common/http/zod-validation.pipe';
import { planViewSchema, setPlanSchema, type SetPlanDto } from './dto/plan.dto';
import { PlanAdminService, type PlanView } from './plan-admin.service';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';

@Controller('v1/admin/accounts/:id/plan')
@Access('admin')
export class PlansController {
  private readonly bodySchema: typeof setPlanSchema;

  constructor(
    private readonly plans: PlanAdminService,
    catalog: PlanCatalog,
  ) {
    this.bodySchema = catalog.withPlanIds(setPlanSchema);
  }

  @Get()
  @Doc({
    id: 'getAccountPlan',
    summary: "An account's plan, overrides, effective terms and current period",
    tag: 'Plans',
    responses: { 200: { description: 'The plan', schema: planViewSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  get(@Param('id') accountId: string): Promise<PlanView> {
    return this.plans.view(accountId);
  }

  @Put()
  @Doc({
    id: 'setAccountPlan',
    summary: "Set an account's plan and its overrides (Enterprise terms), audited",
    tag: 'Plans',
    body: setPlanSchema,
    responses: { 200: { description: 'The plan now', schema: planViewSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  put(
    @Param('id') accountId: string,
    @Body() raw: unknown,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
  ): Promise<PlanView> {
    const body: SetPlanDto = parseOrThrow(this.bodySchema, raw);
    return this.plans.setPlan(accountId, body, `key:${principal.keyId}`, request.id);
  }
}
