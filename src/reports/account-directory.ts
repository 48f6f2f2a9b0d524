import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { rows } from 'src/common/database/transaction';
import { formatCredits, MICROS_PER_CREDIT } from 'src/common/money';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { calendarMonth } from 'src/plan-catalog/periods';
import { lowBalanceThreshold } from 'src/plans/notifications';
import type { Period } from './reports.service';
import { usageSource } from './usage-rollups';
import { inputInstant } from 'src/common/http/api-schemas';

const flag = z.enum(['', 'yes']).optional();

/** The account list's query string (search, filters, sort, page), as the admin console's form sends it (`plan`: AccountDirectory.querySchema). */
export const accountListQuerySchema = z.strictObject({
  q: z.string().max(200).optional(),
  plan: z.string().optional(),
  suspended: flag,
  pastDue: flag,
  lowBalance: flag,
  overThreshold: flag,
  sort: z.enum(['id', 'balance', 'consumption']).default('id'),
  dir: z.enum(['asc', 'desc']).default('asc'),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  from: inputInstant.optional(),
  to: inputInstant.optional(),
});
export type AccountListQuery = z.output<typeof accountListQuerySchema>;

export interface AccountListItem {
  id: string;
  name: string | null;
  kind: string;
  plan: string;
  status: string;
  subscriptionStatus: string | null;
  /** Credits that can be spent now (unheld grants less debt). */
  available: string;
  held: string;
  consumed: string;
  lowBalance: boolean;
  alertsThisMonth: number;
}

export const PAGE_SIZE = 25;

/**
 * The accounts, searched and filtered for support and finance: balances from the wallets, consumption
 * in a period from the usage rollups (whole hours), Stripe status, spend-limit alerts this month.
 * A read across modules' tables, as the reports are.
 */
@Injectable()
export class AccountDirectory {
  /** The query string with `plan` one of the catalog's (or empty: any). */
  readonly querySchema: z.ZodType<AccountListQuery>;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly catalog: PlanCatalog,
  ) {
    this.querySchema = accountListQuerySchema.extend({ plan: z.enum(['', ...catalog.planIds()]).optional() });
  }

  async list(
    q: AccountListQuery,
    period: Period,
    now: Date,
  ): Promise<{ items: AccountListItem[]; total: number; page: number; pages: number }> {
    const month = calendarMonth(now);
    // The low-balance line of each plan's defaults; an account whose contract overrides its included
    // credits gets the line of those (as lowBalanceThreshold: a tenth, at least 1 credit).
    const planIds = this.catalog.planIds();
    const thresholds = planIds.map((id) => lowBalanceThreshold(this.catalog.plan(id)).toString());
    const params: unknown[] = [
      q.q ? `%${q.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null,
      q.plan || null,
      q.suspended === 'yes',
      q.pastDue === 'yes',
      q.lowBalance === 'yes',
      q.overThreshold === 'yes',
      month.start.toISOString(),
      planIds,
      thresholds,
    ];
    const usage = usageSource('account', period, params);
    // Qualified: the output columns of the same names are text.
    const order = { id: 'a.id', balance: 'a.available', consumption: 'a.consumed' }[q.sort];
    const dir = q.dir === 'desc' ? 'DESC' : 'ASC';
    params.push(PAGE_SIZE, (q.page - 1) * PAGE_SIZE);
    const found = await rows<{
      id: string;
      name: string | null;
      kind: string;
      plan: string;
      status: string;
      subscription_status: string | null;
      available: string;
      held: string;
      consumed: string;
      low: boolean;
      alerts: number;
      total: number;
    }>(
      this.ds,
      `WITH base AS (
         SELECT a.id, a.name, a.kind, a.plan, a.status, s.status AS subscription_status,
                coalesce(w.grants_balance + w.debt, 0) AS available, coalesce(w.holds_balance, 0) AS held,
                coalesce(c.consumed, 0) AS consumed,
                coalesce(w.grants_balance + w.debt, 0) < CASE WHEN a.plan_overrides ? 'includedCredits'
                  THEN greatest(${MICROS_PER_CREDIT}, replace(a.plan_overrides->>'includedCredits', '.', '')::bigint / 10)
                  ELSE t.threshold END AS low,
                coalesce(al.alerts, 0)::int AS alerts
         FROM accounts a
         LEFT JOIN wallets w ON w.account_id = a.id
         LEFT JOIN stripe_subscriptions s ON s.account_id = a.id
         LEFT JOIN unnest($8::text[], $9::bigint[]) AS t(plan, threshold) ON t.plan = a.plan
         LEFT JOIN (SELECT account_id, sum(credits) AS consumed FROM ${usage} GROUP BY account_id) c ON c.account_id = a.id
         LEFT JOIN (SELECT l.account_id, count(*) AS alerts FROM spend_limit_alerts x JOIN spend_limits l ON l.id = x.limit_id
                    WHERE x.period_start = $7 GROUP BY l.account_id) al ON al.account_id = a.id
         WHERE ($1::text IS NULL OR a.id ILIKE $1 OR a.name ILIKE $1)
           AND ($2::text IS NULL OR a.plan = $2)
           AND (NOT $3 OR a.status = 'suspended')
           AND (NOT $4 OR s.status IN ('past_due', 'unpaid'))
       )
       SELECT id, name, kind, plan, status, subscription_status, available::text, held::text, consumed::text, low, alerts,
              count(*) OVER ()::int AS total
       FROM base a
       WHERE (NOT $5 OR low) AND (NOT $6 OR alerts > 0)
       ORDER BY ${order} ${dir}, a.id ${dir}
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    // A page past the end has no row to carry the count: the first page's tells it (it shows as empty, with the way back).
    const total = found[0]?.total ?? (q.page > 1 ? (await this.list({ ...q, page: 1 }, period, now)).total : 0);
    return {
      items: found.map((r) => ({
        id: r.id,
        name: r.name,
        kind: r.kind,
        plan: r.plan,
        status: r.status,
        subscriptionStatus: r.subscription_status,
        available: formatCredits(BigInt(r.available)),
        held: formatCredits(BigInt(r.held)),
        consumed: formatCredits(BigInt(r.consumed)),
        lowBalance: r.low,
        alertsThisMonth: r.alerts,
      })),
      total,
      page: q.page,
      pages: Math.max(1, Math.ceil(total / PAGE_SIZE)),
    };
  }
}
