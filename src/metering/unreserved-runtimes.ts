import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { issueTerminate, withdrawUnreserved } from 'src/messaging/commands';
import { topicsOf } from 'src/messaging/topics';
import { validateEnvironmentRequest } from 'src/pricing/pricing';
import { RateCard } from 'src/pricing/rate-card';
import { DEFAULT_MINUTES } from 'src/reservations/dto/reservation.dto';
import { ReservationsService } from 'src/reservations/reservations.service';
import type { Session } from './core/sessions';
import type { LifecycleEvent } from './lifecycle-event';
import type { RuntimeRow } from './runtime-row';
import { storedStartData } from './session-history';

export const METERING_ACTOR = 'system:metering';

/** A runtime that runs (or sent events) without a usable reservation: its locked row, its start in this call, its session. */
export interface Unreserved {
  row: RuntimeRow;
  t: { started?: LifecycleEvent };
  session: Session;
}

/** Refusals that a smaller reservation may pass: the wallet or a spend limit cannot take the default minutes. */
const UNAFFORDABLE = new Set(['DL_BILLING_INSUFFICIENT_CREDITS', 'DL_BILLING_SPEND_LIMIT_REACHED']);

/** The whole minutes an ended session ran (its hold pays for running time only), at least 1. */
function minutesRun(session: Session): number {
  return Math.max(1, Math.ceil(session.closedMs / 60_000));
}

/**
 * Runtimes that run without a usable reservation (metering's rebuild finds them): reserved on the fly
 * through the reservations module, or told to terminate.
 */
@Injectable()
export class UnreservedRuntimes {
  private readonly logger = new Logger('Metering');

  constructor(
    private readonly reservations: ReservationsService,
    private readonly rateCard: RateCard,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A runtime that started without a reservation: reserved now for the default minutes with the
   * environment its `runtime.started` carries, or, where that is refused, told to terminate (unless
   * its events show it terminated already). One whose events all came before (settled at zero,
   * without a hold) is reserved the same way, and then settled on its new hold; where its wallet or
   * spend limit cannot take the default minutes but it ran fewer, it is reserved for the minutes it
   * ran, so that a run they cover is charged. `commanded`: it has a terminate command open (an
   * `unreserved` one is withdrawn once it is reserved).
   */
  async reserve(em: EntityManager, { row, t, session }: Unreserved, commanded: boolean, now: Date): Promise<RuntimeRow> {
    // What it runs: from its start in this call, or stored; a runtime that never reported a start has none.
    const stored = !t.started && session.startedAt !== null ? await storedStartData(em, row.runtime_id, row.created_at) : null;
    const data = t.started?.data ?? stored ?? {};
    let refusal = await this.tryReserve(em, row, data, DEFAULT_MINUTES);
    const ran = minutesRun(session);
    if (refusal && session.status === 'terminated' && UNAFFORDABLE.has(refusal.code) && ran < DEFAULT_MINUTES) {
      refusal = await this.tryReserve(em, row, data, ran);
    }
    if (refusal) {
      if (session.status === 'terminated') return row;
      this.logger.warn(`runtime ${row.runtime_id} started without a reservation and cannot be reserved (${refusal.code}): terminating`);
      await this.terminate(em, row, now);
      return row;
    }
    // Told to terminate before its start said what it runs (a heartbeat came first): no longer.
    if (commanded) {
      await withdrawUnreserved(
        em,
        { topic: topicsOf(this.config).commands, actor: METERING_ACTOR, audit: this.audit },
        row.runtime_id,
        now,
      );
    }
    const [reserved] = await rows<RuntimeRow>(em, `SELECT * FROM runtimes WHERE runtime_id = $1`, [row.runtime_id]);
    // Its hold is new: whatever the row said before (settled at zero without one), it is settled on it now.
    return reserved ? { ...reserved, status: 'reserved', settlement: null, settled_at: null } : row;
  }

  /** Reserves a runtime on the fly for `minutes`, within a savepoint: null once reserved, or why it was refused. */
  private async tryReserve(em: EntityManager, row: RuntimeRow, data: Record<string, unknown>, minutes: number) {
    await em.query('SAVEPOINT reserve_on_the_fly');
    try {
      const { variant, environment } = validateEnvironmentRequest(this.rateCard.current(), {
        variant: data.variant ?? row.variant,
        environment: data.environment ?? row.environment,
      });
      const launch = { accountId: row.account_id, runtimeId: row.runtime_id, variant, environment, minutes };
      await this.reservations.createWithin(em, launch, METERING_ACTOR);
      await em.query('RELEASE SAVEPOINT reserve_on_the_fly');
      return null;
    } catch (error) {
      await em.query('ROLLBACK TO SAVEPOINT reserve_on_the_fly');
      if (!(error instanceof BillingException)) throw error;
      return error;
    }
  }

  /** Tells a runtime that runs without a usable reservation to terminate, once. */
  async terminate(em: EntityManager, row: RuntimeRow, now: Date): Promise<void> {
    const [open] = await rows<{ n: number }>(
      em,
      `SELECT count(*)::int AS n FROM runtime_commands WHERE runtime_id = $1 AND acknowledged_at IS NULL`,
      [row.runtime_id],
    );
    if ((open?.n ?? 0) > 0) return;
    // A reservation given back as never started (voided) expired: it is not a runtime without one.
    const reason = row.hold_id && row.status === 'voided' ? 'reservation_expired' : 'unreserved';
    await issueTerminate(
      em,
      { topic: topicsOf(this.config).commands, actor: METERING_ACTOR, audit: this.audit },
      [{ runtimeId: row.runtime_id, accountId: row.account_id, reason }],
      now,
    );
  }
}
