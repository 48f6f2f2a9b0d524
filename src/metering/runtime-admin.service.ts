import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { topicsOf } from 'src/messaging/topics';
import { issueTerminate } from 'src/messaging/commands';
import { liveRuntimeSql } from 'src/plans/live-runtimes';
import { chargeSoFar, markTerminating, runningMsOf, type RuntimeRow } from './runtime-row';

/** A runtime that may still run, as support sees it: its hold, running time so far and the commands issued. */
export interface LiveRuntimeView {
  runtimeId: string;
  reservationId: string | null;
  status: string;
  userId: string | null;
  agentId: string | null;
  environment: string | null;
  sizeClass: string | null;
  gpu: string | null;
  ratePerHour: string;
  reserved: string;
  chargedSoFar: string;
  runningSeconds: number;
  createdAt: string;
  startedAt: string | null;
  lastSeenAt: string | null;
  commands: { id: string; reason: string; issuedAt: string; acknowledgedAt: string | null }[];
}

/** Support's view of runtimes (live ones of an account) and the admin's terminate command. */
@Injectable()
export class RuntimeAdminService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The account's runtimes that may still run (liveRuntimeSql: reserved, running, paused,
   * terminating, or voided as never started and running after all), oldest first.
   */
  async live(accountId: string): Promise<LiveRuntimeView[]> {
    const found = await rows<
      RuntimeRow & { created_at: Date; commands: { id: string; reason: string; issued_at: string; acknowledged_at: string | null }[] }
    >(
      this.ds,
      `SELECT r.*, (SELECT coalesce(json_agg(json_build_object('id', c.id, 'reason', c.reason, 'issued_at', c.issued_at, 'acknowledged_at', c.acknowledged_at)
                     ORDER BY c.issued_at, c.id), '[]'::json) FROM runtime_commands c WHERE c.runtime_id = r.runtime_id) AS commands
       FROM runtimes r WHERE r.account_id = $1 AND ${liveRuntimeSql('r')} ORDER BY r.created_at, r.runtime_id`,
      [accountId],
    );
    const now = this.clock.now();
    return found.map((r) => {
      const accelerator = (r.environment?.accelerator ?? null) as { type?: string; count?: number } | null;
      return {
        runtimeId: r.runtime_id,
        reservationId: r.reservation_id,
        status: r.status,
        userId: r.user_id,
        agentId: r.agent_id,
        environment: typeof r.environment?.name === 'string' ? r.environment.name : null,
        sizeClass: r.size_class,
        gpu: accelerator?.type ? `${accelerator.count ?? 1} × ${accelerator.type}` : null,
        ratePerHour: formatCredits(BigInt(r.rate_per_hour)),
        reserved: formatCredits(BigInt(r.reserved_amount)),
        chargedSoFar: formatCredits(chargeSoFar(r, now)),
        runningSeconds: Math.floor(runningMsOf(r, now) / 1000),
        createdAt: r.created_at.toISOString(),
        startedAt: r.started_at?.toISOString() ?? null,
        lastSeenAt: r.last_seen_at?.toISOString() ?? null,
        commands: r.commands.map((c) => ({
          id: c.id,
          reason: c.reason,
          issuedAt: new Date(c.issued_at).toISOString(),
          acknowledgedAt: c.acknowledged_at ? new Date(c.acknowledged_at).toISOString() : null,
        })),
      };
    });
  }

  /**
   * Tells a runtime to terminate (reason `admin`): a command row, an outbox message and an audit row
   * with the admin's key, as every enforcement. Asking again while the command is open issues no
   * second one. A runtime that is settled or voided has nothing to terminate (400), unless it is voided
   * as never started and runs after all (liveRuntimeSql): it is told, and stays voided. `ofAccount`: the
   * account the caller believes it belongs to (another account's runtime is not found).
   */
  async terminate(
    runtimeId: string,
    actor: string,
    ofAccount?: string,
  ): Promise<{ runtimeId: string; accountId: string; status: string; commandIssued: boolean }> {
    return inTransaction(this.ds, async (em) => {
      const now = this.clock.now();
      const [row] = await rows<{ account_id: string; status: string; live: boolean }>(
        em,
        `SELECT account_id, status, ${liveRuntimeSql('runtimes')} AS live FROM runtimes WHERE runtime_id = $1 FOR UPDATE`,
        [runtimeId],
      );
      if (!row || (ofAccount !== undefined && row.account_id !== ofAccount)) throw BillingException.notFound(`Runtime ${runtimeId}`);
      if (!row.live) {
        throw BillingException.invalid([{ field: 'runtimeId', message: `the runtime is ${row.status}: there is nothing to terminate` }]);
      }
      // Read under the lock, in a statement of its own (so with a snapshot taken after it): a request
      // that waited for the lock sees the command the one before it issued.
      const [commands] = await rows<{ open: boolean }>(
        em,
        `SELECT EXISTS (SELECT 1 FROM runtime_commands WHERE runtime_id = $1 AND reason = 'admin' AND acknowledged_at IS NULL) AS open`,
        [runtimeId],
      );
      if (commands?.open) return { runtimeId, accountId: row.account_id, status: row.status, commandIssued: false };
      await issueTerminate(
        em,
        { topic: topicsOf(this.config).commands, actor, audit: this.audit },
        [{ runtimeId, accountId: row.account_id, reason: 'admin' }],
        now,
      );
      await markTerminating(em, [runtimeId]);
      // One voided as never started stays voided (markTerminating): its run is charged by a correction.
      return { runtimeId, accountId: row.account_id, status: row.status === 'voided' ? 'voided' : 'terminating', commandIssued: true };
    });
  }
}
