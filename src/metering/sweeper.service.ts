import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { formatCredits } from 'src/common/money';
import { inTransaction, rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { JobsService } from 'src/jobs/jobs.service';
import { LedgerService } from 'src/ledger/ledger.service';
import { topicsOf } from 'src/messaging/topics';
import { chargeFor } from 'src/pricing/charges';
import { addToUsageRollups, rollupDelta } from 'src/reports/usage-rollups';
import { issueTerminate, type CommandIssuer, type TerminateReason } from 'src/messaging/commands';
import { buildSession, chargedRun, type ChargedRun } from './core/sessions';
import { markTerminating, type RuntimeRow } from './runtime-row';
import { runtimeMonthOf, sessionHistory } from './session-history';
import { SettlementHooks, type AfterSettlement } from './settlement-hooks';

const BATCH = 500;

/**
 * Runtimes told to terminate whose grace period has passed and that still report: their newest open
 * command ($1 now, $2 the grace in ms). Read from the open commands (their partial index), not from
 * the runtimes: `settled` and `voided` are the fleet's whole history.
 */
export const REISSUE_DUE = `SELECT r.runtime_id, r.account_id, c.reason
         FROM (SELECT DISTINCT ON (runtime_id) runtime_id, reason, issued_at FROM runtime_commands WHERE acknowledged_at IS NULL
               ORDER BY runtime_id, issued_at DESC) c
         JOIN runtimes r ON r.runtime_id = c.runtime_id
         WHERE r.status IN ('terminating', 'settled', 'voided') AND c.issued_at < $1::timestamptz - make_interval(secs => $2::double precision / 1000)
           AND r.last_seen_at > c.issued_at
         ORDER BY r.runtime_id LIMIT ${BATCH} FOR UPDATE OF r SKIP LOCKED`;

/** Runtimes whose first open command is older than the settle grace ($1 now, $2 the grace in ms), from the open commands as above. */
export const FORCE_SETTLE_DUE = `SELECT r.*, c.reason, c.id AS command_id
         FROM (SELECT DISTINCT ON (runtime_id) id, runtime_id, reason, issued_at FROM runtime_commands WHERE acknowledged_at IS NULL
               ORDER BY runtime_id, issued_at ASC) c
         JOIN runtimes r ON r.runtime_id = c.runtime_id
         WHERE r.status IN ('terminating', 'voided') AND r.hold_id IS NOT NULL
           AND c.issued_at < $1::timestamptz - make_interval(secs => $2::double precision / 1000)
         ORDER BY r.runtime_id LIMIT ${BATCH} FOR UPDATE OF r SKIP LOCKED`;

export interface SweepResult {
  voidedNeverStarted: number;
  reservationExpired: number;
  unreachable: number;
  reissued: number;
  forcedSettlements: number;
}

/**
 * The `expiry-sweep` job: voids reservations never started within 15 minutes, tells runtimes whose
 * running time reached their reservation (or that went silent) to terminate, re-issues commands to
 * runtimes that keep reporting past the grace period, and settles the hold when no
 * `runtime.terminated` arrives in time.
 */
@Injectable()
export class SweeperService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Sweeper');

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly ledger: LedgerService,
    private readonly audit: AuditService,
    private readonly jobs: JobsService,
    private readonly clock: Clock,
    private readonly schedules: SchedulerRegistry,
    private readonly settlementHooks: SettlementHooks,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  private get issuer(): CommandIssuer {
    return { topic: topicsOf(this.config).commands, actor: 'system:expiry-sweep', audit: this.audit };
  }

  onApplicationBootstrap(): void {
    this.jobs.register('expiry-sweep', () => this.sweep());
    this.jobs.register('grant-expiry', async () => {
      const r = await this.ledger.expireGrants(this.clock.now());
      // Amounts in answers are credits ("0.833333"), as everywhere in the API.
      return { grants: r.grants, wallets: r.wallets, amount: formatCredits(r.amount) };
    });
    if (!this.config.cronEnabled) return;
    this.schedules.addInterval(
      'expiry-sweep',
      setInterval(() => void this.jobs.tick('expiry-sweep'), this.config.metering.sweepIntervalMs),
    );
    this.schedules.addInterval(
      'grant-expiry',
      setInterval(() => void this.jobs.tick('grant-expiry'), 60_000),
    );
    this.jobs.scheduledEvery('expiry-sweep', this.config.metering.sweepIntervalMs);
    this.jobs.scheduledEvery('grant-expiry', 60_000);
  }

  async sweep(): Promise<SweepResult> {
    const now = this.clock.now();
    const result = {
      voidedNeverStarted: await this.voidNeverStarted(now),
      reservationExpired: await this.terminate(now, 'reservation_expired'),
      unreachable: await this.terminate(now, 'unreachable'),
      reissued: await this.reissue(now),
      forcedSettlements: await this.forceSettle(now),
    };
    if (Object.values(result).some((n) => n > 0)) this.logger.log({ msg: 'sweep', ...result });
    return result;
  }

  private async voidNeverStarted(now: Date): Promise<number> {
    return inTransaction(this.ds, async (em) => {
      const due = await rows<RuntimeRow>(
        em,
        `SELECT * FROM runtimes WHERE status = 'reserved' AND hold_id IS NOT NULL AND start_deadline < $1 AND started_at IS NULL
         ORDER BY runtime_id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
        [now.toISOString()],
      );
      // Settled at zero, not voided: every credit goes back all the same, and a run that late events
      // show to have happened can still be charged by a correction (as a launch failure's).
      for (const row of due) {
        await this.ledger.settleHold(em, {
          holdId: row.hold_id!,
          amount: 0n,
          actor: 'system:expiry-sweep',
          reason: 'the runtime never started within 15 minutes',
        });
      }
      await this.markResolved(
        em,
        due.map((r) => r.runtime_id),
        'voided',
        'never_started',
        now,
        due.map(() => 0n),
      );
      return due.length;
    });
  }

  private async terminate(now: Date, reason: Extract<TerminateReason, 'reservation_expired' | 'unreachable'>): Promise<number> {
    const condition =
      reason === 'reservation_expired'
        ? `r.closed_ms + extract(epoch FROM ($1::timestamptz - r.open_since)) * 1000 >= r.reserved_minutes::bigint * 60000 AND r.hold_id IS NOT NULL`
        : `r.last_seen_at < $1::timestamptz - make_interval(secs => $2::double precision / 1000)`;
    return inTransaction(this.ds, async (em) => {
      const due = await rows<{ runtime_id: string; account_id: string }>(
        em,
        `SELECT r.runtime_id, r.account_id FROM runtimes r
         WHERE r.status = 'running' AND ${condition}
           AND NOT EXISTS (SELECT 1 FROM runtime_commands c WHERE c.runtime_id = r.runtime_id AND c.acknowledged_at IS NULL)
         ORDER BY r.runtime_id LIMIT ${BATCH} FOR UPDATE OF r SKIP LOCKED`,
        reason === 'reservation_expired' ? [now.toISOString()] : [now.toISOString(), this.config.metering.heartbeatTimeoutMs],
      );
      await issueTerminate(
        em,
        this.issuer,
        due.map((r) => ({ runtimeId: r.runtime_id, accountId: r.account_id, reason })),
        now,
      );
      await markTerminating(
        em,
        due.map((r) => r.runtime_id),
      );
      return due.length;
    });
  }

  /** Runtimes that keep reporting after their last command's grace period are told again (also one settled or voided meanwhile). */
  private async reissue(now: Date): Promise<number> {
    return inTransaction(this.ds, async (em) => {
      const due = await rows<{ runtime_id: string; account_id: string; reason: TerminateReason }>(em, REISSUE_DUE, [
        now.toISOString(),
        this.config.metering.terminateGraceMs,
      ]);
      await issueTerminate(
        em,
        this.issuer,
        due.map((r) => ({ runtimeId: r.runtime_id, accountId: r.account_id, reason: r.reason })),
        now,
      );
      return due.length;
    });
  }

  /**
   * No `runtime.terminated` within the grace period after the first command: settle anyway (a voided
   * reservation whose runtime ran after all: its zero settlement corrected). A
   * silent runtime is charged up to its last sign of life plus the heartbeat timeout (whatever it
   * was told); one past its reservation the hold; others up to now; never more than the hold. The runtime's run is closed
   * at the end it was charged up to. A later terminated event corrects the charge from the events.
   */
  private async forceSettle(now: Date): Promise<number> {
    return inTransaction(this.ds, async (em) => {
      const due = await rows<RuntimeRow & { reason: TerminateReason; command_id: string }>(em, FORCE_SETTLE_DUE, [
        now.toISOString(),
        this.config.metering.settleGraceMs,
      ]);
      const history = await sessionHistory(
        em,
        due.map((r) => ({ id: r.runtime_id, month: runtimeMonthOf(r.created_at) })),
      );
      const charges: bigint[] = [];
      const runs: ChargedRun[] = [];
      const bases: TerminateReason[] = [];
      const afterRows: AfterSettlement[] = [];
      for (const row of due) {
        const cap = BigInt(row.reserved_amount);
        const reservedMs = row.reserved_minutes * 60_000;
        // Whatever it was told, a runtime silent for the heartbeat timeout is presumed lost since its
        // last sign of life plus the timeout: nothing after that is charged.
        const lost = row.last_seen_at ? row.last_seen_at.getTime() + this.config.metering.heartbeatTimeoutMs : Infinity;
        const until = Math.min(now.getTime(), lost);
        // The running time up to that end, never past the reserved minutes (whose charge is the hold).
        const session = buildSession(history.get(row.runtime_id) ?? []);
        const run = chargedRun(session, new Date(until), reservedMs);
        // Cut short by its silence, it is settled as unreachable (e.g. past its reservation only
        // because the sweep came late): charged what it ran until it was lost, not the hold.
        const cut = until < now.getTime() && run.ms < chargedRun(session, now, reservedMs).ms;
        const basis = cut ? 'unreachable' : row.reason;
        bases.push(basis);
        // What its events show it ran (the hold when it ran all its reserved minutes; less when a late
        // pause shows it did not, whatever the command said).
        const charge = min(cap, chargeFor(BigInt(row.rate_per_hour), run.ms));
        const reason = `no runtime.terminated after the ${row.reason} command: settled without it`;
        // A reservation given back as never started (its hold settled at zero) whose runtime ran after
        // all: its charge is a correction of that settlement, keyed by the command it went by.
        const settled =
          row.status === 'voided'
            ? await this.ledger.adjustSettledHold(
                em,
                {
                  holdId: row.hold_id!,
                  newCharge: charge,
                  idempotencyKey: `adjust:${row.runtime_id}:forced:${row.command_id}`,
                  actor: 'system:expiry-sweep',
                  reason,
                },
                now,
              )
            : await this.ledger.settleHold(em, { holdId: row.hold_id!, amount: charge, actor: 'system:expiry-sweep', reason }, now);
        charges.push(settled.charged);
        runs.push(run);
        // Paused memory of the pauses closed by then, as a settlement by events meters it; a late
        // `runtime.terminated` corrects the same row (a pause still open counts from that event).
        const paused = session.pausedIntervals.filter((p) => p.to.getTime() <= until);
        afterRows.push(
          ...(await this.settlementHooks.settled(em, {
            runtimeId: row.runtime_id,
            accountId: row.account_id,
            sizeClass: row.size_class,
            rateCardVersion: row.rate_card_version,
            terminatedAt: run.end ?? new Date(until),
            pausedIntervals: paused,
            pausedMs: paused.reduce((ms, p) => ms + p.to.getTime() - p.from.getTime(), 0),
            first: true,
          })),
        );
      }
      await this.markResolved(
        em,
        due.map((r) => r.runtime_id),
        'settled',
        bases.map((reason) => `forced_${reason}`),
        now,
        charges,
      );
      // The run is closed at the end it was charged up to, so the view stops counting and shows it.
      await em.query(
        `UPDATE runtimes r SET closed_ms = u.ms, open_since = NULL, terminated_at = u.end_at
         FROM unnest($1::text[], $2::bigint[], $3::timestamptz[]) AS u(id, ms, end_at) WHERE r.runtime_id = u.id`,
        [due.map((r) => r.runtime_id), runs.map((r) => r.ms), runs.map((r) => r.end?.toISOString() ?? null)],
      );
      // The usage rollups move by these charges, in this transaction (reports read them).
      await addToUsageRollups(
        em,
        due.flatMap((r, i) =>
          rollupDelta(r, { ...r, status: 'settled', closed_ms: runs[i]!.ms, charged: charges[i]!, settled_at: now }, now),
        ),
      );
      // The rows say settled now: what the hooks asked to run then (a spend check without the hold).
      for (const then of afterRows) await then();
      return due.length;
    });
  }

  private async markResolved(
    em: EntityManager,
    ids: string[],
    status: string,
    settlement: string | string[],
    now: Date,
    charged: bigint[],
  ): Promise<void> {
    if (ids.length === 0) return;
    const settlements = Array.isArray(settlement) ? settlement : ids.map(() => settlement);
    await em.query(
      `UPDATE runtimes r SET status = $2, settlement = u.settlement, settled_at = $3, charged = u.charged,
         released = r.reserved_amount - u.charged, updated_at = now()
       FROM unnest($1::text[], $4::text[], $5::bigint[]) AS u(id, settlement, charged) WHERE r.runtime_id = u.id`,
      [ids, status, now.toISOString(), settlements, charged.map(String)],
    );
  }
}

function min(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
