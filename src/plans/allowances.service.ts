import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { correlationId } from 'src/common/context/correlation';
import { inTransaction, rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { LedgerService } from 'src/ledger/ledger.service';
import { topicsOf } from 'src/messaging/topics';
import { enqueueNotifications } from 'src/messaging/notifications';
import { allowanceGrantId, allowanceKey, allowanceReason } from './allowance-keys';
import { notifyOnce, type Notification } from './notifications';
import { grantsAllowanceHere, loadPlanAccount, termsOf, type PlanAccount } from './plan-accounts';
import { PlanCatalog, type Plan } from 'src/plan-catalog/plan-catalog';
import { calendarMonth, type Period } from 'src/plan-catalog/periods';

export interface MonthlyResetResult {
  period: { from: string; to: string };
  accounts: number;
  granted: string;
  expiredGrants: number;
  expired: string;
  batches: number;
  ms: number;
}

/** A plan's allowance terms (an account's override of the amount wins). */
export interface AllowanceDefault {
  plan: string;
  /** Plan name, for the grant's reason. */
  name: string;
  /** Micro-credits per period. */
  amount: bigint;
  period: string;
}

const RESET_ACTOR = 'system:monthly-reset';
const LAZY_ACTOR = 'system:allowance';

/**
 * Each period's included credits: granted by the monthly reset for every account on a calendar
 * month (set-based: LedgerService.grantInBulk), and lazily by the first reservation of a period whose
 * allowance was not granted yet (same key, so whichever comes first grants and the other does
 * nothing).
 */
@Injectable()
export class AllowancesService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly catalog: PlanCatalog,
    private readonly ledger: LedgerService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Plans granted from here (allowance at the period's start), with their defaults (an account's overrides are read in SQL). */
  defaults(): AllowanceDefault[] {
    return this.catalog
      .plansWhere((p) => p.allowanceTrigger === 'period_start')
      .map((p) => ({ plan: p.id, name: p.name, amount: p.includedCreditsMicros, period: p.period }));
  }

  /**
   * Grants the account's allowance for `period` if it has not been granted (the caller holds the
   * wallet lock, or this takes it). Returns the micro-credits granted now (0 when already granted).
   */
  async ensure(em: EntityManager, account: PlanAccount, plan: Plan, period: Period, now: Date): Promise<bigint> {
    if (!grantsAllowanceHere(plan)) return 0n;
    const done = await rows(em, `SELECT 1 FROM grants WHERE id = $1`, [allowanceGrantId(account.id, period)]);
    if (done.length > 0) return 0n;
    const result = await this.grantBatch(em, [account.id], period, now, LAZY_ACTOR);
    return result.grantedMicros;
  }

  /**
   * The monthly reset: every account on a calendar-month allowance that has not had this month's
   * gets it (what is left of the previous one expires), in batches of wallets locked in account-id
   * order, one transaction per batch, `workers` batches at a time. Idempotent per account and
   * month: run twice, or late (after downtime), it grants only what is missing.
   */
  async monthlyReset(now: Date = this.clock.now(), opts: { batchSize?: number; workers?: number } = {}): Promise<MonthlyResetResult> {
    const started = Date.now();
    const period = calendarMonth(now);
    const batchSize = opts.batchSize ?? 5000;
    const defaults = this.defaults();
    const total = { accounts: 0, granted: 0n, expiredGrants: 0, expired: 0n, batches: 0 };
    let after: string | null = '';
    let cursor: Promise<unknown> = Promise.resolve();
    // Batches are taken in account-id order through one cursor (a window of `batchSize` accounts each,
    // of which those still lacking the allowance); each is its own transaction.
    const nextBatch = (): Promise<string[] | null> => {
      const taken = cursor.then(async () => {
        if (after === null) return null;
        const window = await this.candidates(period, after, batchSize, defaults);
        after = window.last;
        return window.ids;
      });
      cursor = taken.catch(() => undefined);
      return taken;
    };
    const worker = async (): Promise<void> => {
      for (;;) {
        const ids = await nextBatch();
        if (ids === null) return;
        if (ids.length === 0) continue;
        const r = await inTransaction(this.ds, async (em) => {
          // Statements over thousands of rows: sorts in memory, and no JIT (compiling costs more than it saves here).
          await em.query(`SET LOCAL work_mem = '64MB'`);
          await em.query(`SET LOCAL jit = off`);
          // Index lookups for the batch's thousands of rows beat scanning every wallet, grant and audit chain.
          await em.query(`SET LOCAL random_page_cost = 1.1`);
          // The ledger's write statement finds rows by id arrays of thousands: with the ids known when it is planned,
          // a scan can look cheaper than the lookups, and costs ids × rows.
          await em.query(`SET LOCAL enable_seqscan = off`);
          // No wait for the WAL flush at commit: a batch lost in a crash is granted again by the catch-up run at
          // startup (or lazily), and any later transaction that relies on it flushes it with its own commit.
          await em.query(`SET LOCAL synchronous_commit = off`);
          return this.grantBatch(em, ids, period, now, RESET_ACTOR);
        });
        total.accounts += r.granted;
        total.granted += r.grantedMicros;
        total.expiredGrants += r.expiredGrants;
        total.expired += r.expiredMicros;
        total.batches += 1;
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, opts.workers ?? 2) }, worker));
    return {
      period: { from: period.start.toISOString(), to: period.end.toISOString() },
      accounts: total.accounts,
      granted: formatCredits(total.granted),
      expiredGrants: total.expiredGrants,
      expired: formatCredits(total.expired),
      batches: total.batches,
      ms: Date.now() - started,
    };
  }

  /**
   * The allowances of accounts whose period is a billing cycle and whose credits come at its start
   * (an Enterprise contract on a cycle): each granted as its cycle starts (the `cycle-allowances`
   * job, every minute), as the monthly reset does for calendar months, rather than at the cycle's
   * first launch only. Once per account and cycle (the grant's id); one transaction per account.
   */
  async cycleAllowances(now: Date = this.clock.now()): Promise<{ accounts: number; granted: string }> {
    const cyclePlans = this.defaults()
      .filter((d) => d.period === 'billing_cycle')
      .map((d) => d.plan);
    // Through accounts_billing_cycle_idx (a contract's override); a plan on a cycle by default is listed by name.
    const found = await rows<{ id: string }>(
      this.ds,
      `SELECT id FROM accounts WHERE (plan_overrides->>'period') = 'billing_cycle'
       UNION SELECT id FROM accounts WHERE cardinality($1::text[]) > 0 AND plan = ANY($1::text[]) ORDER BY id`,
      [cyclePlans],
    );
    let accounts = 0;
    let granted = 0n;
    for (const { id } of found) {
      const given = await inTransaction(this.ds, async (em) => {
        const account = await loadPlanAccount(em, id);
        if (!account) return 0n;
        const { plan, period } = termsOf(this.catalog, account, now);
        if (plan.period !== 'billing_cycle' || !grantsAllowanceHere(plan)) return 0n;
        return this.ensure(em, account, plan, period, now);
      });
      if (given > 0n) {
        accounts += 1;
        granted += given;
      }
    }
    return { accounts, granted: formatCredits(granted) };
  }

  /**
   * The next window of `limit` accounts after `after` (id order, through the primary key: the cost is the
   * window's, never the rest of the table's), and those of them whose allowance period is the calendar
   * month and that lack this one's. `last` is the window's last id, null past the last account.
   */
  private async candidates(
    period: Period,
    after: string,
    limit: number,
    defaults: AllowanceDefault[],
  ): Promise<{ ids: string[]; last: string | null }> {
    const [found] = await rows<{ ids: string[]; last: string | null }>(
      this.ds,
      `WITH d AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS d(plan text, amount bigint, period text)),
       w AS MATERIALIZED (SELECT id, plan, plan_overrides FROM accounts WHERE id > $2 ORDER BY id LIMIT $4)
       SELECT (SELECT max(id) FROM w) AS last, ARRAY(
         SELECT a.id FROM w a JOIN d ON d.plan = a.plan
         WHERE coalesce(a.plan_overrides->>'period', d.period) = 'calendar_month'
           AND CASE WHEN a.plan_overrides ? 'includedCredits' THEN replace(a.plan_overrides->>'includedCredits', '.', '')::bigint
                    ELSE d.amount END > 0
           AND NOT EXISTS (SELECT 1 FROM grants g WHERE g.id = 'alw_' || md5(a.id || '|' || $3::text))
         ORDER BY a.id) AS ids`,
      [
        JSON.stringify(defaults.map((d) => ({ plan: d.plan, amount: d.amount.toString(), period: d.period }))),
        after,
        period.start.toISOString(),
        limit,
      ],
    );
    return { ids: found?.ids ?? [], last: found?.last ?? null };
  }

  /** `credits.granted` for the rest of a period's allowance granted at an upgrade (once per grant). */
  async announceUpgrade(
    em: EntityManager,
    accountId: string,
    grant: { id: string; amount: bigint },
    period: Period,
    now: Date,
  ): Promise<void> {
    const notification = { ...allowanceNotification(accountId, grant.id, grant.amount, period), cause: `credits.granted:${grant.id}` };
    await notifyOnce(em, topicsOf(this.config).notifications, [notification], now);
  }

  /**
   * Grants the period's allowance to the accounts of `ids` that lack it: the plans decide who gets
   * what (the plan's included credits, or the account's override), the ledger grants them in bulk
   * (expiring what is due first), and each grant is announced on the notifications topic.
   */
  private async grantBatch(em: EntityManager, ids: string[], period: Period, now: Date, actor: string): Promise<AllowanceBatchResult> {
    const topic = topicsOf(this.config).notifications;
    const targets = await this.allowancesOf(em, ids, period);
    const granted = await this.ledger.grantInBulk(em, {
      grants: targets,
      source: 'plan_allowance',
      expiresAt: period.end,
      idempotencyKey: allowanceKey(period),
      actor,
      correlationId: correlationId(),
      now,
    });
    const byAccount = new Map(targets.map((t) => [t.accountId, t]));
    const notification = allowanceNotifications(period);
    await enqueueNotifications(
      em,
      topic,
      now,
      granted.granted.map((id) => {
        const t = byAccount.get(id)!;
        return notification(t.accountId, t.grantId, t.amount);
      }),
    );
    const result: AllowanceBatchResult = {
      granted: granted.granted.length,
      grantedMicros: granted.grantedMicros,
      expiredGrants: granted.expiredGrants,
      expiredMicros: granted.expiredMicros,
    };
    // A wallet in debt: LedgerService.grant repays the debt first (same key and grant id as the bulk path).
    const inDebt = new Set(granted.inDebt);
    for (const t of targets.filter((t) => inDebt.has(t.accountId))) {
      await this.ledger.grant(em, {
        accountId: t.accountId,
        source: 'plan_allowance',
        amount: t.amount,
        expiresAt: period.end,
        priority: 0,
        grantId: t.grantId,
        idempotencyKey: allowanceKey(period),
        reason: t.reason,
        actor,
      });
      await notifyOnce(em, topic, [allowanceNotification(t.accountId, t.grantId, t.amount, period)], now);
      result.granted += 1;
      result.grantedMicros += t.amount;
    }
    return result;
  }

  /** What each account of `ids` on a plan granted from here gets this period: the plan's included credits, or its override. */
  private async allowancesOf(
    em: EntityManager,
    ids: string[],
    period: Period,
  ): Promise<{ accountId: string; grantId: string; amount: bigint; reason: string }[]> {
    const defaults = this.defaults();
    const found = await rows<{ id: string; plan: string; amount: string }>(
      em,
      `WITH d AS (SELECT * FROM jsonb_to_recordset($2::jsonb) AS d(plan text, amount bigint))
       SELECT a.id, a.plan, CASE WHEN a.plan_overrides ? 'includedCredits' THEN replace(a.plan_overrides->>'includedCredits', '.', '')::bigint
                                 ELSE d.amount END::text AS amount
       FROM accounts a JOIN d ON d.plan = a.plan WHERE a.id = ANY(ARRAY(SELECT unnest($1::text[])))`,
      [ids, JSON.stringify(defaults.map((d) => ({ plan: d.plan, amount: d.amount.toString() })))],
    );
    // Per plan, not per account: thousands of accounts share a few reasons.
    const reasons = new Map(defaults.map((d) => [d.plan, allowanceReason(d.name, period)]));
    return found
      .filter((a) => BigInt(a.amount) > 0n)
      .map((a) => ({
        accountId: a.id,
        grantId: allowanceGrantId(a.id, period),
        amount: BigInt(a.amount),
        reason: reasons.get(a.plan)!,
      }));
  }
}

interface AllowanceBatchResult {
  granted: number;
  grantedMicros: bigint;
  expiredGrants: number;
  expiredMicros: bigint;
}

/** A period's allowance granted, once per account and period. */
function allowanceNotification(accountId: string, grantId: string, amount: bigint, period: Period): Notification {
  return allowanceNotifications(period)(accountId, grantId, amount);
}

/** allowanceNotification for the accounts of one period (its instants written once, not per account). */
function allowanceNotifications(period: Period): (accountId: string, grantId: string, amount: bigint) => Notification {
  const from = period.start.toISOString();
  const to = period.end.toISOString();
  return (accountId, grantId, amount) => ({
    type: 'credits.granted',
    accountId,
    cause: `credits.granted:${accountId}:${from}`,
    data: { grantId, source: 'plan_allowance', credits: formatCredits(amount), expiresAt: to, period: { from, to } },
  });
}
