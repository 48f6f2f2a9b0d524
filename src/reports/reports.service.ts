import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { ancillaryUsageJson, meteredAncillary } from 'src/ancillary/usage-view';
import { DataSource } from 'typeorm';
import { LongQueries } from 'src/common/database/query-bounds';
import { rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { seatsReport } from './seats-report';
import { usageSource, type UsageLevel } from './usage-rollups';
import type { CreditGroup, ReportName, UsageGroup } from './report-names';

export type Cell = string | number | boolean | null;

/** A report: its columns in order (also the CSV header), one item per row, and totals where they mean something. */
export interface Report {
  report: ReportName;
  from: string;
  to: string;
  groupBy?: string;
  columns: string[];
  items: Record<string, Cell>[];
  totals?: Record<string, Cell>;
  notes?: string[];
}

export interface Period {
  from: Date;
  to: Date;
}

/** `group`: the key of each rollup row; `select`: how the summed groups show it (a day is formatted once per day, not per row). */
const USAGE_KEYS: Record<UsageGroup, { group: string; select: string; columns: string[] }> = {
  account: { group: `account_id AS account`, select: `account`, columns: ['account'] },
  environment: { group: `environment`, select: `environment`, columns: ['environment'] },
  day: { group: `(at AT TIME ZONE 'UTC')::date AS day`, select: `to_char(day, 'YYYY-MM-DD') AS day`, columns: ['day'] },
  user: { group: `account_id AS account, user_id AS "user"`, select: `account, "user"`, columns: ['account', 'user'] },
};

/** The rollups each grouping reads: the narrowest that still has its key. */
const USAGE_LEVEL: Record<UsageGroup, UsageLevel> = { account: 'account', day: 'account', environment: 'detailed', user: 'detailed' };

const CREDIT_KEYS: Record<CreditGroup, { select: string; columns: string[] }> = {
  total: { select: ``, columns: [] },
  day: { select: `to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,`, columns: ['day'] },
  account: { select: `t.account_id AS account,`, columns: ['account'] },
};

const CREDIT_COLUMNS = ['granted', 'topUps', 'clawedBack', 'consumed', 'refunded', 'expired', 'net'] as const;

interface CreditRow {
  granted: string;
  top_ups: string;
  clawed_back: string;
  consumed: string;
  refunded: string;
  expired: string;
}

/**
 * Admin reports over a half-open UTC period. Usage and top consumers read the usage rollups (kept in
 * the charges' own transactions); credits read the ledger entries; seats, reconciliation and spend
 * limits read their modules' tables.
 */
@Injectable()
export class ReportsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly plans: PlanCatalog,
  ) {}

  /**
   * Ancillary usage (snapshots, volumes, egress) metered in the period by account and kind, priced or
   * not: quantity in the kind's unit, credits due, charged and unpaid (ancillary module's read).
   */
  @LongQueries()
  async ancillary(period: Period): Promise<Report> {
    const metered = await meteredAncillary(this.ds, { from: period.from, to: period.to });
    const items = metered.map((m) => {
      const j = ancillaryUsageJson(m);
      return {
        account: m.accountId,
        kind: j.kind,
        unit: j.unit,
        priced: j.priced,
        quantity: j.quantity,
        amount: j.amount,
        charged: j.charged,
        unpaid: j.unpaid,
      };
    });
    const sum = (key: 'amount' | 'charged' | 'unpaid') =>
      formatCredits(
        metered.reduce((acc, m) => acc + (key === 'amount' ? m.amount : key === 'charged' ? m.charged : m.amount - m.charged), 0n),
      );
    return {
      report: 'ancillary',
      from: period.from.toISOString(),
      to: period.to.toISOString(),
      columns: ['account', 'kind', 'unit', 'priced', 'quantity', 'amount', 'charged', 'unpaid'],
      items,
      totals: { amount: sum('amount'), charged: sum('charged'), unpaid: sum('unpaid') },
      notes: ['Unpriced usage (priced = false) is metered and never charged; storage is per hour of existence, egress per report.'],
    };
  }

  /** Settled usage (runtimes, running seconds, credits) by account, environment, day or user, from the monthly, daily and hourly rollups. */
  @LongQueries()
  async usage(period: Period, groupBy: UsageGroup): Promise<Report> {
    const key = USAGE_KEYS[groupBy];
    const params: unknown[] = [];
    const found = await this.readRollups<Record<string, string>>(
      `SELECT ${key.select}, runtimes::text, ms::text, credits::text
       FROM (SELECT ${key.group}, sum(runtimes) AS runtimes, sum(running_ms) AS ms, sum(credits) AS credits
             FROM ${usageSource(USAGE_LEVEL[groupBy], period, params, groupBy === 'day')}
             GROUP BY ${key.columns.map((_, i) => i + 1).join(', ')}) g
       ORDER BY ${key.columns.map((_, i) => i + 1).join(', ')}`,
      params,
    );
    let runtimes = 0n;
    let seconds = 0n;
    let credits = 0n;
    const items = found.map((r) => {
      // Each row's whole seconds, rounded down; the total is their sum, so the rows add up to it.
      const rowSeconds = BigInt(r.ms!) / 1000n;
      runtimes += BigInt(r.runtimes!);
      seconds += rowSeconds;
      credits += BigInt(r.credits!);
      const keys = Object.fromEntries(key.columns.map((c) => [c, r[c] ?? '']));
      return { ...keys, runtimes: Number(r.runtimes), seconds: Number(rowSeconds), credits: formatCredits(BigInt(r.credits!)) };
    });
    return {
      report: 'usage',
      ...iso(period),
      groupBy,
      columns: [...key.columns, 'runtimes', 'seconds', 'credits'],
      items,
      totals: { runtimes: Number(runtimes), seconds: Number(seconds), credits: formatCredits(credits) },
      notes: [
        'Runtimes and their running time count in the UTC hour their charge was first settled; credits in the hour each charge or correction was posted, as on the ledger and the statement.',
      ],
    };
  }

  /**
   * A query of the usage rollups, planned for its own parameters and without JIT: JIT compilation
   * costs more than summing the few hundred thousand rows a report reads, and a pooled connection may
   * carry the ledger's session setting for generic plans (`GENERIC_PLANS`), which would plan the
   * ranges blind. Enough memory that grouping by user (tens of thousands of groups) stays in memory.
   */
  private readRollups<T>(sql: string, params: unknown[]): Promise<T[]> {
    return this.ds.transaction(async (em) => {
      await em.query(
        `SELECT set_config('jit', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true), set_config('work_mem', '32MB', true)`,
      );
      return rows<T>(em, sql, params);
    });
  }

  /** The accounts that consumed the most credits in the period (settled charges, from the rollups). */
  @LongQueries()
  async topConsumers(period: Period, limit: number): Promise<Report> {
    const params: unknown[] = [limit];
    const found = await this.readRollups<{
      account: string;
      name: string | null;
      plan: string | null;
      runtimes: string;
      ms: string;
      credits: string;
    }>(
      `SELECT u.account_id AS account, a.name, a.plan, u.runtimes::text, u.ms::text, u.credits::text
       FROM (SELECT account_id, sum(runtimes) AS runtimes, sum(running_ms) AS ms, sum(credits) AS credits
             FROM ${usageSource('account', period, params)} GROUP BY account_id
             ORDER BY sum(credits) DESC, account_id LIMIT $1) u
       LEFT JOIN accounts a ON a.id = u.account_id
       ORDER BY u.credits DESC, u.account_id`,
      params,
    );
    return {
      report: 'top-consumers',
      ...iso(period),
      columns: ['rank', 'account', 'name', 'plan', 'runtimes', 'seconds', 'credits'],
      items: found.map((r, i) => ({
        rank: i + 1,
        account: r.account,
        name: r.name,
        plan: r.plan,
        runtimes: Number(r.runtimes),
        seconds: Number(BigInt(r.ms) / 1000n),
        credits: formatCredits(BigInt(r.credits)),
      })),
    };
  }

  /**
   * Credits in and out, from the ledger entries of transactions posted in the period: granted
   * (allowances, admin, promotions) and top-ups are what `issued` gave, clawed back what went back to
   * `issued`; consumed and refunded are the charges and the downward corrections on `consumption`;
   * expired is `expired`. So granted + topUps − clawedBack = −Σ issued, consumed − refunded =
   * Σ consumption, expired = Σ expired, over the same entries.
   */
  @LongQueries()
  async credits(period: Period, groupBy: CreditGroup): Promise<Report> {
    const key = CREDIT_KEYS[groupBy];
    const group = key.columns.length > 0 ? `GROUP BY 1 ORDER BY 1` : '';
    const found = await rows<CreditRow & Record<string, string>>(
      this.ds,
      `SELECT ${key.select}
         coalesce(sum(-e.amount) FILTER (WHERE e.ledger_account = 'issued' AND e.amount < 0 AND NOT top_up), 0)::text AS granted,
         coalesce(sum(-e.amount) FILTER (WHERE e.ledger_account = 'issued' AND e.amount < 0 AND top_up), 0)::text AS top_ups,
         coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'issued' AND e.amount > 0), 0)::text AS clawed_back,
         coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'consumption' AND e.amount > 0), 0)::text AS consumed,
         coalesce(sum(-e.amount) FILTER (WHERE e.ledger_account = 'consumption' AND e.amount < 0), 0)::text AS refunded,
         coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'expired'), 0)::text AS expired
       FROM (SELECT t.id, t.account_id, t.created_at, (t.kind = 'top-up' OR g.source = 'top_up') AS top_up
             FROM ledger_transactions t LEFT JOIN grants g ON g.id = t.grant_id
             WHERE t.created_at >= $1 AND t.created_at < $2 AND t.kind <> 'reservation') t
       JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account IN ('issued', 'consumption', 'expired')
       ${group}`,
      [period.from.toISOString(), period.to.toISOString()],
    );
    const sum: Record<keyof CreditRow, bigint> = { granted: 0n, top_ups: 0n, clawed_back: 0n, consumed: 0n, refunded: 0n, expired: 0n };
    const items = found.map((r) => {
      for (const k of Object.keys(sum) as (keyof CreditRow)[]) sum[k] += BigInt(r[k]);
      return { ...Object.fromEntries(key.columns.map((c) => [c, r[c] ?? ''])), ...showCredits(r) };
    });
    const totals = showCredits(Object.fromEntries(Object.entries(sum).map(([k, v]) => [k, v.toString()])) as unknown as CreditRow);
    return {
      report: 'credits',
      ...iso(period),
      groupBy,
      columns: [...key.columns, ...CREDIT_COLUMNS],
      items: groupBy === 'total' ? [totals] : items,
      totals,
      notes: [
        'net = granted + topUps − clawedBack − consumed + refunded − expired: the change of what the wallets hold (debt counts as negative).',
      ],
    };
  }

  /**
   * Accounts on a plan Stripe bills (Team as shipped): active seats, the Stripe seat quantity, the
   * recurring revenue they imply, and what the subscription's invoices of the period billed: their
   * totals as Stripe invoiced them (an invoice recorded before totals were kept: the plan's prices).
   */
  @LongQueries()
  seats(period: Period, now: Date): Promise<Report> {
    return seatsReport(this.ds, this.plans, period, now);
  }

  /** Spend-limit notifications (thresholds, reached) and terminate commands, one row per event. */
  @LongQueries()
  async spendLimits(period: Period): Promise<Report> {
    const found = await rows<{
      type: string;
      account: string;
      user: string | null;
      event: string;
      threshold: number | null;
      spent: string | null;
      limit_micros: string | null;
      runtime: string | null;
      at: Date;
    }>(
      this.ds,
      `SELECT 'alert' AS type, l.account_id AS account, NULLIF(l.scope_user_id, '') AS "user", a.kind AS event, a.threshold,
              a.spent_micros::text AS spent, a.limit_micros::text, NULL AS runtime, a.notified_at AS at
       FROM spend_limit_alerts a JOIN spend_limits l ON l.id = a.limit_id
       WHERE a.notified_at >= $1 AND a.notified_at < $2
       UNION ALL
       SELECT 'termination', c.account_id, r.user_id, c.reason, NULL, NULL, NULL, c.runtime_id, c.issued_at
       FROM (SELECT DISTINCT ON (runtime_id, reason) runtime_id, account_id, reason, issued_at FROM runtime_commands
             WHERE type = 'runtime.terminate' AND issued_at >= $1 AND issued_at < $2 ORDER BY runtime_id, reason, issued_at) c
       LEFT JOIN runtimes r ON r.runtime_id = c.runtime_id
       ORDER BY at, account, type, "user" NULLS FIRST, event, threshold NULLS FIRST, runtime NULLS FIRST`,
      [period.from.toISOString(), period.to.toISOString()],
    );
    const counts: Record<string, number> = {};
    for (const r of found) counts[`${r.type}:${r.event}`] = (counts[`${r.type}:${r.event}`] ?? 0) + 1;
    return {
      report: 'spend-limits',
      ...iso(period),
      columns: ['at', 'type', 'account', 'user', 'event', 'threshold', 'spent', 'limit', 'runtime'],
      items: found.map((r) => ({
        at: new Date(r.at).toISOString(),
        type: r.type,
        account: r.account,
        user: r.user,
        event: r.event,
        threshold: r.threshold,
        spent: r.spent === null ? null : formatCredits(BigInt(r.spent)),
        limit: r.limit_micros === null ? null : formatCredits(BigInt(r.limit_micros)),
        runtime: r.runtime,
      })),
      totals: counts,
      notes: [
        'A termination row is a runtime told to terminate for that reason (re-issued commands are counted once).',
        'limit is the limit in force when the alert fired; empty for alerts recorded before that was kept.',
      ],
    };
  }

  /**
   * Per UTC day by size class and GPU type: the runtimes first settled that day with their running
   * time, and the runtime charges and corrections the ledger posted that day — the statement's dating,
   * so the credits of a period are its statements' runtime charges (a correction posted later is on
   * the day it was posted, not with the runtime). Read from the period's rows: the runtimes by their
   * settlement (runtimes_settled_idx), the postings by time (a reservation never moves consumption),
   * each runtime by its id through its hold.
   */
  @LongQueries()
  async usageByClass(period: Period): Promise<Report> {
    const found = await rows<{ day: string; size_class: string | null; gpu: string | null; runtimes: number; ms: string; credits: string }>(
      this.ds,
      `WITH facts AS (
         SELECT settled_at AS at, size_class, environment #>> '{accelerator,type}' AS gpu, 1 AS runtimes, closed_ms AS ms, 0::bigint AS credits
         FROM runtimes WHERE settled_at >= $1 AND settled_at < $2 AND status = 'settled'
         UNION ALL
         SELECT t.created_at, r.size_class, r.environment #>> '{accelerator,type}', 0, 0, e.amount
         FROM ledger_transactions t
         JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account = 'consumption'
         -- The posting's runtime by its id through its hold: one of each (LIMIT 1 keeps the planner from joining
         -- the whole holds table to the period's postings).
         CROSS JOIN LATERAL (
           SELECT r.size_class, r.environment FROM holds h JOIN runtimes r ON r.runtime_id = h.reference AND r.hold_id = h.id
           WHERE h.id = t.hold_id AND r.account_id = t.account_id LIMIT 1) r
         WHERE t.created_at >= $1 AND t.created_at < $2 AND t.kind <> 'reservation' AND t.hold_id LIKE 'hold\\_%')
       SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, size_class, gpu,
              sum(runtimes)::int AS runtimes, sum(ms)::text AS ms, sum(credits)::text AS credits
       FROM facts GROUP BY 1, 2, 3 ORDER BY 1, 2 NULLS LAST, 3 NULLS FIRST`,
      [period.from.toISOString(), period.to.toISOString()],
    );
    return {
      report: 'usage',
      ...iso(period),
      groupBy: 'day,sizeClass,gpu',
      columns: ['day', 'sizeClass', 'gpu', 'runtimes', 'seconds', 'credits'],
      items: found.map((r) => ({
        day: r.day,
        sizeClass: r.size_class ?? 'unknown',
        gpu: r.gpu,
        runtimes: r.runtimes,
        seconds: Number(BigInt(r.ms) / 1000n),
        credits: formatCredits(BigInt(r.credits)),
      })),
    };
  }

  /** Seat discrepancies the reconciliation job found in the period, and the drift that exists now. */
  @LongQueries()
  async reconciliation(period: Period, now: Date): Promise<Report> {
    const found = await rows<{
      kind: string;
      account: string;
      subscription: string;
      invoice: string | null;
      stripe_quantity: number;
      active_seats: number;
      detected_at: Date;
      corrected_at: Date | null;
      resolved_at: Date | null;
    }>(
      this.ds,
      `SELECT kind, account_id AS account, subscription_id AS subscription, invoice_id AS invoice, stripe_quantity, active_seats, detected_at, corrected_at, resolved_at
       FROM stripe_seat_discrepancies WHERE detected_at >= $1 AND detected_at < $2
       UNION ALL
       SELECT 'open_drift', s.account_id, s.subscription_id, NULL, s.seat_quantity, coalesce(m.seats, 0)::int, $3::timestamptz, NULL, NULL
       FROM stripe_subscriptions s
       CROSS JOIN LATERAL (SELECT count(*) AS seats FROM account_members a WHERE a.account_id = s.account_id AND a.active) m
       WHERE s.status IN ('active', 'trialing', 'past_due') AND s.seat_quantity <> coalesce(m.seats, 0)
       ORDER BY detected_at, account`,
      [period.from.toISOString(), period.to.toISOString(), now.toISOString()],
    );
    return {
      report: 'reconciliation',
      ...iso(period),
      columns: [
        'detectedAt',
        'kind',
        'account',
        'subscription',
        'invoice',
        'stripeQuantity',
        'activeSeats',
        'difference',
        'correctedAt',
        'resolvedAt',
      ],
      items: found.map((r) => ({
        detectedAt: new Date(r.detected_at).toISOString(),
        kind: r.kind,
        account: r.account,
        subscription: r.subscription,
        invoice: r.invoice,
        stripeQuantity: r.stripe_quantity,
        activeSeats: r.active_seats,
        difference: r.stripe_quantity - r.active_seats,
        correctedAt: r.corrected_at ? new Date(r.corrected_at).toISOString() : null,
        resolvedAt: r.resolved_at ? new Date(r.resolved_at).toISOString() : null,
      })),
      totals: {
        discrepancies: found.filter((r) => r.kind !== 'open_drift' && !r.resolved_at).length,
        resolved: found.filter((r) => r.resolved_at).length,
        openDrift: found.filter((r) => r.kind === 'open_drift').length,
      },
      notes: [
        'open_drift rows compare every billing Team subscription with its active members now, whatever the period.',
        'An invoice_seats row with resolvedAt was shown wrong by a membership change received later (the invoice billed the seats active when it was created); activeSeats is the count known now.',
      ],
    };
  }
}

function iso(p: Period): { from: string; to: string } {
  return { from: p.from.toISOString(), to: p.to.toISOString() };
}

function showCredits(r: CreditRow): Record<(typeof CREDIT_COLUMNS)[number], string> {
  const b = (k: keyof CreditRow) => BigInt(r[k]);
  return {
    granted: formatCredits(b('granted')),
    topUps: formatCredits(b('top_ups')),
    clawedBack: formatCredits(b('clawed_back')),
    consumed: formatCredits(b('consumed')),
    refunded: formatCredits(b('refunded')),
    expired: formatCredits(b('expired')),
    net: formatCredits(b('granted') + b('top_ups') - b('clawed_back') - b('consumed') + b('refunded') - b('expired')),
  };
}
