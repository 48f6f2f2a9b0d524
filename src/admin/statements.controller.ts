import { Controller, Get, Headers, Param, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AccountsService } from 'src/accounts/accounts.service';
import { Public } from 'src/common/auth/auth.decorators';
import { BillingException } from 'src/common/errors/billing.exception';
import { checkPeriod } from 'src/statements/dto/statement.dto';
import { StatementsService } from 'src/statements/statements.service';
import { AdminAuth } from './admin-auth';
import { statementPage } from './statement-page';
import { ConsoleErrorFilter } from './console-error.filter';

/** An account's monthly statement as a printable page of the console. */
@Controller('admin/accounts/:id/statements')
@UseFilters(ConsoleErrorFilter)
@Public()
export class AdminStatementsController {
  constructor(
    private readonly auth: AdminAuth,
    private readonly accounts: AccountsService,
    private readonly statements: StatementsService,
  ) {}

  @Get(':period')
  show(
    @Param('id') id: string,
    @Param('period') period: string,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.auth.page(reply, cookies, async (viewer) => {
      checkPeriod(period);
      const account = await this.accounts.get(id);
      if (!account) throw BillingException.notFound(`Account ${id}`);
      return statementPage(await this.statements.statement(id, period), account.name ?? account.id, viewer);
    });
  }
}
