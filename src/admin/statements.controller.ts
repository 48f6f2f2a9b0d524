import { Controller, Get, Headers, Param, Query, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { AccountsService } from 'src/accounts/accounts.service';
import { Public } from 'src/common/auth/auth.decorators';
import { BillingException } from 'src/common/errors/billing.exception';
import { checkPeriod } from 'src/statements/dto/statement.dto';
import { toCsv } from 'src/reports/to-csv';
import { STATEMENT_CSV_COLUMNS, statementCsvRows, StatementsService } from 'src/statements/statements.service';
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
  async show(
    @Param('id') id: string,
    @Param('period') period: string,
    @Query('format') format: string | undefined,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    if (format === 'csv') return this.csv(id, period, cookies, reply);
    return this.auth.page(reply, cookies, async (viewer) => {
      checkPeriod(period);
      const account = await this.accounts.get(id);
      if (!account) throw BillingException.notFound(`Account ${id}`);
      return statementPage(await this.statements.statement(id, period), account.name ?? account.id, viewer);
    });
  }

  /** The statement's CSV for the signed-in browser, as the API's `format=csv` (which needs a bearer key). */
  private async csv(id: string, period: string, cookies: string | undefined, reply: FastifyReply): Promise<string> {
    if (!(await this.auth.signedIn(reply, cookies))) return '';
    checkPeriod(period);
    if (!(await this.accounts.get(id))) throw BillingException.notFound(`Account ${id}`);
    const statement = await this.statements.statement(id, period);
    void reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="statement_${id}_${period}.csv"`);
    return toCsv({ columns: STATEMENT_CSV_COLUMNS, items: statementCsvRows(statement) });
  }
}
