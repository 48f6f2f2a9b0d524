import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { pageOfRows, type PageRequest, type RowsPage } from 'src/common/database/page-of-rows';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits, parseCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { LedgerService } from 'src/ledger/ledger.service';
import type { SpendView, WalletExtension } from 'src/ledger/wallet-extensions';
import { notifyOnce, type Notification } from 'src/messaging/notifications';
import { topicsOf } from 'src/messaging/topics';
import { issueTerminate, type TerminateReason } from 'src/messaging/commands';
import { markTerminating } from 'src/metering/runtime-row';
import { liveRuntimeSql } from 'src/plans/live-runtimes';
import { calendarMonth, type Period } from 'src/plan-catalog/periods';
import type { SpendLimitRequest } from './dto/spend-limit.dto';
import { spendOf, spendOfMembers, type LimitRow, type Spend } from './spend-limit-reads';

export interface SpendAlert {
  kind: 'threshold_crossed' | 'reached';
  threshold: number;
}

export interface SpendAlertView {
  at: string;
  period: string;
  scope: { userId: string } | null;
  kind: string;
  threshold: number;
  spent: string;
  limitAtTheTime: string | null;
}

export interface SpendLimitView {
  accountId: string;
  scope: { userId: string } | null;
  period: string;
  credits: string | null;
  thresholds: number[];
  spent: string;
  held: string;
  remaining: string | null;
  terminated: string[];
}

/**
 * Spend limits per account, or per member, per calendar month. Spend = settled charges + open holds
 * of the runtimes reserved in the period. Checks take the wallet lock first, so that the check and
 * the hold of a reservation are one decision: no two concurrent reservations can pass a limit together.
 */
@Injectable()
export class SpendLimitsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly ledger: LedgerService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The wallet view's `spend` (WALLET_EXTENSIONS). */
  readonly walletExtension: WalletExtension = { spend: (accountId, now, base) => this.walletSpend(accountId, now, base) };

  /**
   * After a change of spend (a hold, an extension, a settlement): notifies each threshold crossed
   * once per limit and period, and `spend_limit.reached` once at 100%. `known`: the limits in scope,
   * when the caller read them (SpendLimitReads).
   */
  async notifyThresholds(em: EntityManager, accountId: string, userId: string | null, now: Date, known?: LimitRow[]): Promise<void> {
    const limits = known ?? (await this.limitsInScope(em, accountId, userId));
    const period = calendarMonth(now);
    for (const limit of limits) {
      if (limit.limit_micros === null) continue;
      const cap = BigInt(limit.limit_micros);
      const spend = await spendOf(em, accountId, limit.scope_user_id || null, period);
      const used = spend.charged + spend.held;
      const due = dueAlerts(limit, used);
      if (due.length === 0) continue;
      // A threshold is crossed once per limit and period; the limit is reached once per amount: reached,
      // then raised (or lowered), it is reached again at the new amount (the row then tells the last time).
      const fresh = await rows<{ kind: string; threshold: number }>(
        em,
        `INSERT INTO spend_limit_alerts AS a (limit_id, period_start, kind, threshold, spent_micros, limit_micros, notified_at)
         SELECT $1, $2, k, t, $5, $6, $7 FROM unnest($3::text[], $4::int[]) AS d(k, t)
         ON CONFLICT (limit_id, period_start, kind, threshold) DO UPDATE
           SET spent_micros = EXCLUDED.spent_micros, limit_micros = EXCLUDED.limit_micros, notified_at = EXCLUDED.notified_at
           WHERE a.kind = 'reached' AND a.limit_micros IS DISTINCT FROM EXCLUDED.limit_micros
         RETURNING kind, threshold`,
        [
          limit.id,
          period.start.toISOString(),
          due.map((d) => d.kind),
          due.map((d) => d.threshold),
          used.toString(),
          cap.toString(),
          now.toISOString(),
        ],
      );
      // Each cause once (a limit reached at an amount already announced this period, after a change
      // and back, is not announced again), in the order they happen: thresholds up to 100 %, then reached.
      await notifyOnce(
        em,
        topicsOf(this.config).notifications,
        fresh
          .sort((a, b) => Number(a.kind === 'reached') - Number(b.kind === 'reached') || a.threshold - b.threshold)
          .map((a) => spendLimitNotice(limit, period, a, cap, used, accountId)),
        now,
      );
    }
  }

  /** PUT /v1/accounts/{id}/spend-limit: sets the limit; lowering it below the spend terminates the scope's runtimes. */
  async set(accountId: string, request: SpendLimitRequest, actor: string): Promise<SpendLimitView> {
    return inTransaction(this.ds, async (em) => {
      const now = this.clock.now();
      await this.ensureAccount(em, accountId);
      await this.ledger.lockWallet(em, accountId);
      const scopeUserId = request.scope?.userId ?? '';
      const [before] = await rows<LimitRow>(em, `SELECT * FROM spend_limits WHERE account_id = $1 AND scope_user_id = $2`, [
        accountId,
        scopeUserId,
      ]);
      const limitMicros = request.credits === null ? null : parseCredits(request.credits)!;
      const [after] = await rows<LimitRow>(
        em,
        `INSERT INTO spend_limits (id, account_id, scope_user_id, period, limit_micros, thresholds)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (account_id, scope_user_id) DO UPDATE SET
           period = EXCLUDED.period, limit_micros = EXCLUDED.limit_micros, thresholds = EXCLUDED.thresholds, updated_at = now()
         RETURNING *`,
        [
          `sl_${randomUUID()}`,
          accountId,
          scopeUserId,
          request.period,
          limitMicros?.toString() ?? null,
          [...request.thresholds].sort((a, b) => a - b),
        ],
      );
      const period = calendarMonth(now);
      const spend = await spendOf(em, accountId, scopeUserId || null, period);
      let terminated: string[] = [];
      if (limitMicros !== null && spend.charged + spend.held > limitMicros) {
        terminated = await this.terminateActive(em, accountId, scopeUserId || null, 'spend_limit', now);
      }
      // The same limit set again (a form submitted twice, a client's retry) changes nothing: no audit row for no change.
      const unchanged = before !== undefined && JSON.stringify(show(before)) === JSON.stringify(show(after!)) && terminated.length === 0;
      if (!unchanged) {
        await this.audit.record(em, {
          actor,
          action: 'spend_limit.set',
          accountId,
          before: before ? show(before) : null,
          after: { ...show(after!), terminated },
          at: now,
        });
      }
      await this.notifyThresholds(em, accountId, scopeUserId || null, now);
      return this.view(after!, spend, terminated);
    });
  }

  async get(accountId: string, userId: string | null): Promise<SpendLimitView> {
    const now = this.clock.now();
    await this.ensureAccount(this.ds.manager, accountId);
    const [limit] = await rows<LimitRow>(this.ds, `SELECT * FROM spend_limits WHERE account_id = $1 AND scope_user_id = $2`, [
      accountId,
      userId ?? '',
    ]);
    const spend = await spendOf(this.ds.manager, accountId, userId, calendarMonth(now));
    return this.view(
      limit ?? { id: '', account_id: accountId, scope_user_id: userId ?? '', period: 'month', limit_micros: null, thresholds: [] },
      spend,
      [],
    );
  }

  /**
   * A page of the account's spend-limit alerts, newest first (ties: scope, threshold, kind, period, so the
   * order never changes between reads), with how many there are in all, each with the limit in force
   * when it fired (null for alerts recorded before that was kept).
   */
  async alerts(accountId: string, page: PageRequest): Promise<RowsPage<SpendAlertView>> {
    const found = await pageOfRows<{
      scope_user_id: string;
      period_start: Date;
      kind: string;
      threshold: number;
      spent_micros: string;
      limit_micros: string | null;
      notified_at: Date;
    }>(
      this.ds,
      `SELECT l.scope_user_id, a.period_start, a.kind, a.threshold, a.spent_micros::text, a.limit_micros::text, a.notified_at
       FROM spend_limit_alerts a JOIN spend_limits l ON l.id = a.limit_id
       WHERE l.account_id = $1`,
      [accountId],
      'notified_at DESC, scope_user_id, threshold, kind, period_start',
      page,
    );
    return {
      ...found,
      items: found.items.map((r) => ({
        at: r.notified_at.toISOString(),
        period: r.period_start.toISOString(),
        scope: r.scope_user_id ? { userId: r.scope_user_id } : null,
        kind: r.kind,
        threshold: r.threshold,
        spent: formatCredits(BigInt(r.spent_micros)),
        limitAtTheTime: r.limit_micros === null ? null : formatCredits(BigInt(r.limit_micros)),
      })),
    };
  }

  /**
   * A page of the account's limits by scope, the account-wide one first (its scope '' sorts first),
   * then the members' by user id: `size` limits after the member `after` (the last of the previous
   * page), read from the account's unique key, and whether more follow (`next`: the last member
   * shown). Their spend is read once for the page's members. `thresholds`: the account-wide limit's,
   * on every page (null without one).
   */
  async limitsPage(
    accountId: string,
    page: { after?: string; size: number },
  ): Promise<{ items: SpendLimitView[]; next: string | null; thresholds: number[] | null }> {
    const period = calendarMonth(this.clock.now());
    const found = await rows<LimitRow>(
      this.ds,
      `SELECT * FROM spend_limits WHERE account_id = $1 AND ($2::text IS NULL OR scope_user_id > $2) ORDER BY scope_user_id LIMIT $3`,
      [accountId, page.after ?? null, page.size + 1],
    );
    const shown = found.slice(0, page.size);
    const members = shown.filter((l) => l.scope_user_id !== '');
    const spends = await spendOfMembers(
      this.ds,
      accountId,
      members.map((l) => l.scope_user_id),
      period,
    );
    const items: SpendLimitView[] = [];
    for (const l of shown) {
      const spend = l.scope_user_id === '' ? await spendOf(this.ds, accountId, null, period) : spends.get(l.scope_user_id);
      items.push(this.view(l, spend ?? { charged: 0n, held: 0n }, []));
    }
    let wide = shown.find((l) => l.scope_user_id === '');
    if (!wide && page.after !== undefined) {
      [wide] = await rows<LimitRow>(this.ds, `SELECT * FROM spend_limits WHERE account_id = $1 AND scope_user_id = ''`, [accountId]);
    }
    const last = shown[shown.length - 1];
    return { items, next: found.length > page.size && last ? last.scope_user_id : null, thresholds: wide?.thresholds ?? null };
  }

  /**
   * Tells every runtime of the scope that may still run (liveRuntimeSql: also one voided as never
   * started that runs after all) to terminate, once per reason; returns their ids.
   */
  async terminateActive(
    em: EntityManager,
    accountId: string,
    userId: string | null,
    reason: TerminateReason,
    now: Date,
  ): Promise<string[]> {
    const targets = await rows<{ runtime_id: string }>(
      em,
      `SELECT r.runtime_id FROM runtimes r
       WHERE r.account_id = $1 AND ($2::text IS NULL OR r.user_id = $2) AND ${liveRuntimeSql('r')}
         AND NOT EXISTS (SELECT 1 FROM runtime_commands c WHERE c.runtime_id = r.runtime_id AND c.acknowledged_at IS NULL AND c.reason = $3)
       ORDER BY r.runtime_id FOR UPDATE OF r`,
      [accountId, userId, reason],
    );
    const ids = targets.map((t) => t.runtime_id);
    await issueTerminate(
      em,
      { topic: topicsOf(this.config).commands, actor: `system:${reason}`, audit: this.audit },
      ids.map((runtimeId) => ({ runtimeId, accountId, reason })),
      now,
    );
    await markTerminating(em, ids);
    return ids;
  }

  private async walletSpend(accountId: string, now: Date, base: SpendView): Promise<SpendView> {
    const period = calendarMonth(now);
    const [limit] = await rows<LimitRow>(this.ds, `SELECT * FROM spend_limits WHERE account_id = $1 AND scope_user_id = ''`, [accountId]);
    const spend = await spendOf(this.ds.manager, accountId, null, period);
    return {
      ...base,
      period: 'month',
      from: period.start.toISOString(),
      to: period.end.toISOString(),
      spent: formatCredits(spend.charged),
      held: formatCredits(spend.held),
      limit: limit?.limit_micros ? formatCredits(BigInt(limit.limit_micros)) : null,
    };
  }

  private async limitsInScope(em: Pick<EntityManager, 'query'>, accountId: string, userId: string | null): Promise<LimitRow[]> {
    return rows<LimitRow>(
      em,
      `SELECT * FROM spend_limits WHERE account_id = $1 AND (scope_user_id = '' OR scope_user_id = $2) ORDER BY scope_user_id`,
      [accountId, userId ?? ''],
    );
  }

  private async ensureAccount(em: Pick<EntityManager, 'query'>, accountId: string): Promise<void> {
    const found = await rows(em, `SELECT 1 FROM accounts WHERE id = $1`, [accountId]);
    if (found.length === 0) throw BillingException.notFound(`Account ${accountId}`);
  }

  private view(limit: LimitRow, spend: Spend, terminated: string[]): SpendLimitView {
    const used = spend.charged + spend.held;
    const cap = limit.limit_micros === null ? null : BigInt(limit.limit_micros);
    return {
      accountId: limit.account_id,
      scope: limit.scope_user_id ? { userId: limit.scope_user_id } : null,
      period: limit.period,
      credits: cap === null ? null : formatCredits(cap),
      thresholds: limit.thresholds,
      spent: formatCredits(spend.charged),
      held: formatCredits(spend.held),
      remaining: cap === null ? null : formatCredits(cap > used ? cap - used : 0n),
      terminated,
    };
  }
}

/** The alerts a spend of `used` calls for (each crossed threshold, and `reached` at 100 %), sent or not. */
export function dueAlerts(limit: LimitRow, used: bigint): SpendAlert[] {
  if (limit.limit_micros === null) return [];
  const cap = BigInt(limit.limit_micros);
  const due = limit.thresholds
    .filter((t) => used * 100n >= cap * BigInt(t))
    .map((t): SpendAlert => ({ kind: 'threshold_crossed', threshold: t }));
  if (used >= cap) due.push({ kind: 'reached', threshold: 100 });
  return due;
}

function show(limit: LimitRow): Record<string, unknown> {
  return {
    scope: limit.scope_user_id || null,
    period: limit.period,
    credits: limit.limit_micros === null ? null : formatCredits(BigInt(limit.limit_micros)),
    thresholds: limit.thresholds,
  };
}

/**
 * A spend-limit alert as a notification: a threshold once per limit, period and threshold (the key
 * of `spend_limit_alerts`), the limit reached once per limit, period and amount; that is its cause,
 * so a re-sent copy has the same id.
 */
export function spendLimitNotice(
  limit: LimitRow,
  period: Period,
  alert: { kind: string; threshold: number },
  cap: bigint,
  used: bigint,
  accountId: string,
): Notification {
  const reached = alert.kind === 'reached';
  const type = reached ? 'spend_limit.reached' : 'spend_limit.threshold_crossed';
  return {
    type,
    accountId,
    cause: `${type}:${limit.id}:${period.start.toISOString()}:${reached ? cap.toString() : alert.threshold}`,
    data: {
      limitId: limit.id,
      scope: limit.scope_user_id ? { userId: limit.scope_user_id } : null,
      ...(reached ? {} : { threshold: alert.threshold }),
      limit: formatCredits(cap),
      spent: formatCredits(used),
      period: { from: period.start.toISOString(), to: period.end.toISOString() },
    },
  };
}
