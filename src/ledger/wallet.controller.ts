import { Controller, Get, Param, Query } from '@nestjs/common';
import type { z } from 'zod';
import { Access } from 'src/common/auth/auth.decorators';
import { BillingException } from 'src/common/errors/billing.exception';
import { Doc } from 'src/common/http/openapi';
import { ZodQueryPipe } from 'src/common/http/zod-validation.pipe';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { calendarMonth } from 'src/plan-catalog/periods';
import { ledgerPageSchema, statementQuerySchema, walletSchema } from './dto/grant.dto';
import { statementBody } from './http';
import { balanceJson } from './http';
import { LedgerService } from './ledger.service';
import { WalletExtensions } from './wallet-extensions';

@Controller('v1/accounts/:id')
@Access('control-plane', { accountParam: 'id' })
export class WalletController {
  constructor(
    private readonly ledger: LedgerService,
    private readonly extensions: WalletExtensions,
    private readonly clock: Clock,
  ) {}

  @Get('wallet')
  @Doc({
    id: 'getWallet',
    summary: "The wallet: balances, grants in burn order, this period's spend and runs",
    tag: 'Wallet',
    responses: { 200: { description: 'The wallet', schema: walletSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  async wallet(@Param('id') accountId: string): Promise<Record<string, unknown>> {
    const wallet = await this.ledger.wallet(undefined, accountId);
    const now = this.clock.now();
    const month = calendarMonth(now);
    const spent = await this.ledger.consumedBetween(accountId, month.start, month.end);
    const spend = await this.extensions.spend(accountId, now, {
      period: 'month',
      from: month.start.toISOString(),
      to: month.end.toISOString(),
      spent: formatCredits(spent),
      held: formatCredits(wallet.held),
      limit: null,
    });
    return {
      accountId,
      ...balanceJson(wallet),
      grants: wallet.grants.map((g) => ({
        id: g.id,
        source: g.source,
        remaining: formatCredits(g.remaining),
        expiresAt: g.expiresAt?.toISOString() ?? null,
        amount: formatCredits(g.amount),
        priority: g.priority,
      })),
      spend,
      runs: await this.extensions.runs(accountId, now),
    };
  }

  @Get('ledger')
  @Doc({
    id: 'getLedger',
    summary: 'The ledger, newest first, each entry explaining itself',
    description: 'Pass `nextCursor` as `cursor` for the next page.',
    tag: 'Wallet',
    query: statementQuerySchema,
    responses: { 200: { description: 'One page', schema: ledgerPageSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  async statement(
    @Param('id') accountId: string,
    @Query(new ZodQueryPipe(statementQuerySchema)) q: z.output<typeof statementQuerySchema>,
  ): Promise<{ items: Record<string, unknown>[]; nextCursor: string | null }> {
    if (!(await this.ledger.accountExists(accountId))) throw BillingException.notFound(`Account ${accountId}`);
    const page = await this.ledger.statement(accountId, { cursor: q.cursor, limit: q.limit });
    return { items: page.items.map(statementBody), nextCursor: page.nextCursor };
  }
}
