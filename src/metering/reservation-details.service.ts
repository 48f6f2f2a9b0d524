import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { rows } from '../common/database/transaction';
import { formatCredits } from '../common/money';
import { Clock } from '../infra/clock/clock';
import { buildSession, type MeteredEvent } from './core/sessions';
import type { LifecycleType } from './lifecycle-event';
import { ReservationsService } from './reservations.service';
import { runningMsOf, type RuntimeRow } from './runtime-row';

export interface ReservationDetailsView {
  reservationId: string | null;
  runtimeId: string;
  accountId: string;
  status: string;
  ratePerHour: string;
  rateCardVersion: string | null;
  specDigest: string | null;
  minutes: number;
  reserved: string;
  runningSeconds: number;
  charged: string;
  released: string;
  settlement: string | null;
  intervals: { from: string; to: string | null }[];
  explanation: string;
  commands: { id: string; type: string; reason: string; issuedAt: string; acknowledgedAt: string | null }[];
}

/** GET /v1/reservations/{runtimeId}: enforcement and every charge explained, without reading Kafka. */
@Injectable()
export class ReservationDetails {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly reservations: ReservationsService,
    private readonly clock: Clock,
  ) {}

  async get(runtimeId: string): Promise<ReservationDetailsView | null> {
    const [row] = await rows<RuntimeRow>(this.ds, `SELECT * FROM runtimes WHERE runtime_id = $1`, [runtimeId]);
    if (!row) return null;
    const now = this.clock.now();
    const [events, commands] = await Promise.all([
      rows<{ id: string; type: LifecycleType; occurred_at: Date; seq: string; data: Record<string, unknown> }>(
        this.ds,
        `SELECT id, type, occurred_at, seq, data FROM runtime_events WHERE runtime_id = $1 AND type <> 'runtime.heartbeat'`,
        [runtimeId],
      ),
      rows<{ id: string; type: string; reason: string; issued_at: Date; acknowledged_at: Date | null }>(
        this.ds,
        `SELECT id, type, reason, issued_at, acknowledged_at FROM runtime_commands WHERE runtime_id = $1 ORDER BY issued_at, id`,
        [runtimeId],
      ),
    ]);
    const session = buildSession(events.map((e): MeteredEvent & { data: Record<string, unknown> } => ({ id: e.id, type: e.type, occurredAt: e.occurred_at, seq: Number(e.seq), data: e.data })));
    const runningMs = runningMsOf(row, now);
    const charged = this.reservations.chargeSoFar(row, now);
    const rate = formatCredits(BigInt(row.rate_per_hour));
    return {
      reservationId: row.reservation_id,
      runtimeId: row.runtime_id,
      accountId: row.account_id,
      status: row.status,
      ratePerHour: rate,
      rateCardVersion: row.rate_card_version,
      specDigest: row.spec_digest,
      minutes: row.reserved_minutes,
      reserved: formatCredits(BigInt(row.reserved_amount)),
      runningSeconds: Math.floor(runningMs / 1000),
      charged: formatCredits(charged),
      released: formatCredits(BigInt(row.released)),
      settlement: row.settlement,
      intervals: session.intervals.map((i) => ({ from: i.from.toISOString(), to: i.to?.toISOString() ?? null })),
      explanation: explain(row, runningMs, rate, charged),
      commands: commands.map((c) => ({
        id: c.id,
        type: c.type,
        reason: c.reason,
        issuedAt: c.issued_at.toISOString(),
        acknowledgedAt: c.acknowledged_at?.toISOString() ?? null,
      })),
    };
  }
}

function explain(row: RuntimeRow, runningMs: number, rate: string, charged: bigint): string {
  const base = `${(runningMs / 1000).toFixed(3)} s running × ${rate} credits/hour (rate card ${row.rate_card_version ?? 'none'}), rounded up to the micro-credit, capped at the hold of ${formatCredits(BigInt(row.reserved_amount))}`;
  switch (row.settlement) {
    case 'events':
      return `settled on runtime.terminated: ${base} = ${formatCredits(charged)}`;
    case 'launch_failed':
      return 'launch failed: nothing charged, the hold was given back';
    case 'never_started':
      return 'never started within 15 minutes: the hold was voided';
    case null:
      return `so far: ${base} = ${formatCredits(charged)}`;
    default:
      return `settled without runtime.terminated (${row.settlement}): ${formatCredits(charged)}`;
  }
}
