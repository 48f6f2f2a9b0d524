import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Access } from 'src/common/auth/auth.decorators';
import { Doc } from 'src/common/http/openapi';
import { parseQueryOrThrow } from 'src/common/http/zod-validation.pipe';
import { toCsv, wantsCsv } from 'src/reports/to-csv';
import { checkPeriod, periodParam, statementQuery, statementSchema, type StatementJson } from './dto/statement.dto';
import { STATEMENT_CSV_COLUMNS, statementCsvRows, StatementsService } from './statements.service';

@Controller('v1/accounts/:id/statements')
@Access('control-plane', 'reports', { accountParam: 'id' })
export class StatementsController {
  constructor(private readonly statements: StatementsService) {}

  @Get(':period')
  @Doc({
    id: 'getStatement',
    summary: "An account's statement for a calendar month",
    description:
      'Opening balance, every ledger movement of the month in lines (included credits, grants, top-ups, runtime charges by environment and size class/GPU, ' +
      'ancillary charges by kind, expiries, claw-backs), unpriced ancillary usage with what the plan includes, the closing balance ' +
      '(opening + Σ lines, equal to the ledger entries), and for Team the fees Stripe invoiced in dollars. JSON, or CSV with `format=csv` or `Accept: text/csv`.',
    tag: 'Wallet',
    query: statementQuery,
    params: { period: periodParam },
    responses: { 200: { description: 'The statement', schema: statementSchema, csv: true } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  async statement(
    @Param('id') accountId: string,
    @Param('period') period: string,
    @Query() query: unknown,
    @Headers('accept') accept: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<StatementJson | string> {
    const q = parseQueryOrThrow(statementQuery, query);
    checkPeriod(period);
    const statement = await this.statements.statement(accountId, period);
    if (wantsCsv(q.format, accept)) {
      void reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="statement_${accountId}_${period}.csv"`);
      return toCsv({ columns: STATEMENT_CSV_COLUMNS, items: statementCsvRows(statement) });
    }
    return statement;
  }
}
