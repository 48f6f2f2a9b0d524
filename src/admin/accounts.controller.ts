import { randomUUID } from 'node:crypto';
import { Controller, Get, Headers, Param, Query, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { AccountsService } from 'src/accounts/accounts.service';
import { ApiKeysService } from 'src/accounts/auth/api-keys.service';
import { Public } from 'src/common/auth/auth.decorators';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { AuditService } from 'src/audit/audit.service';
import { BillingException } from 'src/common/errors/billing.exception';
import { parseQueryOrThrow } from 'src/common/http/zod-validation.pipe';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { balanceJson, grantJson, statementBody } from 'src/ledger/http';
import { LedgerService } from 'src/ledger/ledger.service';
import { WalletExtensions } from 'src/ledger/wallet-extensions';
import { MembersService } from 'src/members/members.service';
import { RuntimeAdminService } from 'src/metering/runtime-admin.service';
import { PlanAdminService } from 'src/plans/plan-admin.service';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { calendarMonth } from 'src/plan-catalog/periods';
import { QuotasService } from 'src/plans/quotas.service';
import { AccountDirectory, type AccountListQuery } from 'src/reports/account-directory';
import type { Period } from 'src/reports/reports.service';
import { noteErrorCode } from 'src/common/http/request-notes';
import { parseReportQuery } from 'src/reports/report-query';
import { SpendLimitsService } from 'src/spend-limits/spend-limits.service';
import { SubscriptionsService } from 'src/stripe/subscriptions.service';
import { signedFlash } from './admin-session';
import { ACCOUNT_LISTS, ACCOUNT_TABLES, accountPage } from './account-page';
import { accountsPage, refusedAccountsPage } from './accounts-page';
import { AdminAuth, formOf } from './admin-auth';
import { invalidFindings } from './form-fields';
import { readPages } from './paging';
import { shell } from './render';
import { ConsoleErrorFilter } from './console-error.filter';

const cursor = z
  .string()
  .regex(/^\d{1,18}$/, 'must be a cursor from this page')
  .optional();
const accountQuerySchema = z.strictObject({
  ledgerCursor: cursor,
  auditCursor: cursor,
  // The last member, the last member's spend limit and the last key of the previous page of each.
  membersCursor: z.string().min(1).max(256).optional(),
  limitsCursor: z.string().regex(ACCOUNT_ID_PATTERN, 'must be a cursor from this page').optional(),
  keysCursor: z
    .string()
    .regex(/^key_[A-Za-z0-9_]{1,64}$/, 'must be a cursor from this page')
    .optional(),
  done: z.string().max(300).optional(),
  sig: z.string().max(100).optional(),
});

/** The accounts list and one account's page, read through the owning modules' services. */
@Controller('admin/accounts')
@UseFilters(ConsoleErrorFilter)
@Public()
export class AdminAccountsController {
  constructor(
    private readonly auth: AdminAuth,
    private readonly directory: AccountDirectory,
    private readonly accounts: AccountsService,
    private readonly plans: PlanAdminService,
    private readonly quotas: QuotasService,
    private readonly ledger: LedgerService,
    private readonly extensions: WalletExtensions,
    private readonly runtimes: RuntimeAdminService,
    private readonly limits: SpendLimitsService,
    private readonly members: MembersService,
    private readonly subscriptions: SubscriptionsService,
    private readonly keys: ApiKeysService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly catalog: PlanCatalog,
  ) {}

  @Get()
  list(
    @Query() query: unknown,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.auth.page(reply, cookies, async (viewer) => {
      const now = this.clock.now();
      let q: AccountListQuery;
      let period: Period;
      try {
        q = parseQueryOrThrow(this.directory.querySchema, query);
        // Consumption is read from the hourly usage rollups: the period must be whole hours (as the reports).
        period = parseReportQuery('usage', { from: q.from, to: q.to }, now).period;
      } catch (error) {
        if (!invalidFindings(error)) throw error;
        // What was typed comes back in the form, each finding beside its field.
        const refused = error as BillingException;
        void reply.code(400);
        noteErrorCode(reply.request, refused.code);
        return shell(
          'Accounts: please correct the search',
          viewer,
          'accounts',
          refusedAccountsPage(formOf(query), this.catalog.planIds(), refused),
        );
      }
      const result = await this.directory.list(q, period, now);
      return shell('Accounts', viewer, 'accounts', accountsPage(q, period, result, this.catalog.planIds()));
    });
  }

  @Get(':id')
  show(
    @Param('id') id: string,
    @Query() query: unknown,
    @Headers('cookie') cookies: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    return this.auth.page(reply, cookies, async (viewer) => {
      // Each bad parameter is a finding of the 400 page: a table's page as a cursor.
      const { rest, pages, findings } = readPages(ACCOUNT_TABLES, query);
      let q: z.infer<typeof accountQuerySchema> = {};
      try {
        q = parseQueryOrThrow(accountQuerySchema, rest);
      } catch (error) {
        const refused = invalidFindings(error);
        if (!refused) throw error;
        findings.push(...refused);
      }
      if (findings.length > 0) throw BillingException.invalid(findings);
      const size = (key: keyof typeof ACCOUNT_TABLES) => ({ page: pages[key], size: ACCOUNT_TABLES[key].size });
      const account = await this.accounts.get(id);
      if (!account) throw BillingException.notFound(`Account ${id}`);
      const now = this.clock.now();
      const month = calendarMonth(now);
      const [plan, quotas, wallet, statement, runtimes, limits, alerts, members, subscription, billing, keys, audit] = await Promise.all([
        this.plans.view(id),
        this.quotas.quotasNow(id, now),
        this.ledger.wallet(undefined, id),
        this.ledger.statement(id, { cursor: q.ledgerCursor, limit: 25 }),
        this.runtimes.live(id),
        this.limits.limitsPage(id, { after: q.limitsCursor, size: ACCOUNT_LISTS.limits }),
        this.limits.alerts(id, size('alertsPage')),
        this.members.page(id, { after: q.membersCursor, size: ACCOUNT_LISTS.members }),
        this.subscriptions.view(id),
        this.subscriptions.billingHistory(id, { invoices: size('invoicesPage'), topUps: size('topUpsPage') }),
        this.keys.keysOf(id, { after: q.keysCursor, size: ACCOUNT_LISTS.keys }),
        this.audit.list({ accountId: id, cursor: q.auditCursor, limit: 25 }),
      ]);
      const spend = await this.extensions.spend(id, now, {
        period: 'month',
        from: month.start.toISOString(),
        to: month.end.toISOString(),
        spent: formatCredits(await this.ledger.consumedBetween(id, month.start, month.end)),
        held: formatCredits(wallet.held),
        limit: null,
      });
      const body = accountPage(
        {
          account,
          plan,
          planIds: this.catalog.planIds(),
          quotas,
          wallet: { ...balanceJson(wallet), grants: wallet.grants.map(grantJson) },
          spend: {
            spent: spend.spent,
            held: spend.held,
            limit: spend.limit,
            from: spend.from ?? month.start.toISOString(),
            to: spend.to ?? month.end.toISOString(),
          },
          ledger: { items: statement.items.map(statementBody), nextCursor: statement.nextCursor, cursor: q.ledgerCursor },
          runtimes,
          limits: { ...limits, cursor: q.limitsCursor },
          alerts,
          members: { ...members, cursor: q.membersCursor },
          subscription,
          billing,
          keys: { ...keys, cursor: q.keysCursor },
          audit: { items: audit.items, nextCursor: audit.nextCursor, cursor: q.auditCursor },
          pages,
          done: signedFlash(viewer.csrf, `/admin/accounts/${encodeURIComponent(id)}`, q.done, q.sig),
          idempotencyKey: randomUUID(),
        },
        viewer,
      );
      return shell(`Account ${account.name ?? account.id}`, viewer, 'accounts', body);
    });
  }
}
