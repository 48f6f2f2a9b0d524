import { Body, Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Doc } from 'src/common/http/openapi';
import { parseOrThrow } from 'src/common/http/zod-validation.pipe';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { AccountsService, type AccountView } from './accounts.service';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import type { Principal } from 'src/common/auth/scopes';
import { accountSchema, upsertAccountSchema, type UpsertAccountDto } from './dto/account.dto';

@Controller('v1/accounts')
export class AccountsController {
  private readonly bodySchema: typeof upsertAccountSchema;

  constructor(
    private readonly accounts: AccountsService,
    catalog: PlanCatalog,
  ) {
    this.bodySchema = catalog.withPlanIds(upsertAccountSchema);
  }

  /** Creates (201) or updates (200) an account; a new account gets an empty wallet. */
  @Post()
  @HttpCode(201)
  @Access('admin', 'control-plane')
  @Doc({
    id: 'upsertAccount',
    summary: 'Create or update an account',
    tag: 'Accounts',
    body: upsertAccountSchema,
    responses: {
      201: { description: 'Created, with an empty wallet', schema: accountSchema },
      200: { description: 'Updated', schema: accountSchema },
    },
  })
  async upsert(
    @Body() raw: unknown,
    @CurrentPrincipal() principal: Principal,
    @Req() request: FastifyRequest,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AccountView> {
    const body: UpsertAccountDto = parseOrThrow(this.bodySchema, raw);
    const { created, account } = await this.accounts.upsertTx(body, `key:${principal.keyId}`, request.id);
    void reply.status(created ? 201 : 200);
    return account;
  }
}
