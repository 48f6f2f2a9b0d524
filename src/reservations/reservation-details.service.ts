import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { buildSession, chargedRun, type MeteredEvent, type Session } from 'src/metering/core/sessions';
import type { LifecycleType } from 'src/metering/lifecycle-event';
import { chargeSoFar, runningMsOf, type RuntimeRow } from 'src/metering/runtime-row';

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
  /** The reason its runtime.terminated (or launch failure) gave, as given. */
  terminationReason: string | null;
  intervals: { from: string; to: string | null }[];
  explanation: string;
  /** What an operator should look at: events that contradict the charge (kept, not acted on). */
  review: { flag: 'launch_failed_contradicted'; eventId: string; occurredAt: string; reason: string | null; message: string }[];
  commands: { id: string; type: string; reason: string; issuedAt: string; acknowledgedAt: string | null }[];
}

/** GET /v1/reservations/{runtimeId}: enforcement and every charge explained, without reading Kafka. */
@Injectable()
export class ReservationDetails {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async get(runtimeId: string): Promise<ReservationDetailsView | null> {
    const [row] = await rows<RuntimeRow>(this.ds, `SELECT * FROM runtimes WHERE runtime_id = $1`, [runtimeId]);
    if (!row) return null;
    const now = this.clock.now();
    const [events, commands] = await Promise.all([
      rows<{ id: string; type: LifecycleType; occurred_at: Date; seq: string; data: Record<string, unknown> }>(
        this.ds,
        `SELECT id, type, occurred_at, seq, data FROM runtime_events
         WHERE runtime_month = runtime_month($2) AND runtime_id = $1 AND type <> 'runtime.heartbeat'`,
        [runtimeId, row.created_at],
      ),
      rows<{ id: string; type: string; reason: string; issued_at: Date; acknowledged_at: Date | null }>(
        this.ds,
        `SELECT id, type, reason, issued_at, acknowledged_at FROM runtime_commands WHERE runtime_id = $1 ORDER BY issued_at, id`,
        [runtimeId],
      ),
    ]);
    const session = buildSession(
      events.map((e): MeteredEvent & { data: Record<string, unknown> } => ({
        id: e.id,
        type: e.type,
        occurredAt: e.occurred_at,
        seq: Number(e.seq),
        data: e.data,
      })),
    );
    // A runtime told to terminate as unreachable will be charged up to its last sign of life plus the
    // heartbeat timeout (the forced settlement's end): its charge so far stops growing there.
    const heartbeatTimeoutMs = this.config.metering.heartbeatTimeoutMs;
    const silentSince =
      row.status === 'terminating' && commands.some((c) => c.reason === 'unreachable') && row.last_seen_at
        ? new Date(row.last_seen_at.getTime() + heartbeatTimeoutMs)
        : null;
    const asOf = silentSince && silentSince < now ? silentSince : now;
    const runningMs = runningMsOf(row, asOf);
    const charged = chargeSoFar(row, asOf);
    const rate = formatCredits(BigInt(row.rate_per_hour));
    // A forced settlement closed the run at the end it charged up to (kept as the row's end).
    const forced = row.status === 'settled' && row.settlement?.startsWith('forced_') && row.terminated_at ? row.terminated_at : null;
    const intervals = forced ? chargedRun(session, forced, row.reserved_minutes * 60_000).intervals : session.intervals;
    const flagged = session.contradictedLaunchFailure;
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
      terminationReason: row.termination_reason,
      intervals: intervals.map((i) => ({ from: i.from.toISOString(), to: i.to?.toISOString() ?? null })),
      explanation: explain({
        row,
        runningMs,
        rate,
        charged,
        session,
        heartbeatTimeoutMs,
        firstCommand: settlingCommand(commands, row.settled_at),
        silentSince: asOf === now ? null : asOf,
      }),
      review: flagged
        ? [
            {
              flag: 'launch_failed_contradicted',
              eventId: flagged.eventId,
              occurredAt: flagged.at.toISOString(),
              reason: flagged.reason,
              message: 'runtime.launch_failed for a runtime whose events show a run: recorded, not voided; the charge stands',
            },
          ]
        : [],
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

interface Explained {
  row: RuntimeRow;
  runningMs: number;
  rate: string;
  charged: bigint;
  session: Session;
  heartbeatTimeoutMs: number;
  /** The reason of its first terminate command (a forced settlement's basis may differ: silence). */
  firstCommand: string | null;
  /** Unreachable: its last sign of life + the heartbeat timeout, where its charge so far stops. */
  silentSince: Date | null;
}

function explain(x: Explained): string {
  const { row, runningMs, rate, charged, session } = x;
  const base = `${(runningMs / 1000).toFixed(3)} s running × ${rate} credits/hour (rate card ${row.rate_card_version ?? 'none'}), rounded up to the micro-credit, capped at the hold of ${formatCredits(BigInt(row.reserved_amount))}`;
  const flagged = session.contradictedLaunchFailure
    ? `; a runtime.launch_failed (${session.contradictedLaunchFailure.eventId}, ${session.contradictedLaunchFailure.at.toISOString()}) contradicts this run: flagged for review, not voided`
    : '';
  switch (row.settlement) {
    case 'events':
      return `settled on runtime.terminated: ${base} = ${formatCredits(charged)}${flagged}`;
    case 'launch_failed':
      return 'launch failed: nothing charged, the hold was given back';
    case 'never_started':
      return 'never started within 15 minutes: the hold was voided';
    case null:
      return x.silentSince
        ? `so far, up to ${x.silentSince.toISOString()} = its last sign of life + the heartbeat timeout (${x.heartbeatTimeoutMs / 1000} s), as it is unreachable: ${base} = ${formatCredits(charged)}${flagged}`
        : `so far: ${base} = ${formatCredits(charged)}${flagged}`;
    default:
      return `${forcedBasis(x)}: ${base} = ${formatCredits(charged)}${flagged}`;
  }
}

/** Why a settlement without runtime.terminated charged up to where it did. */
function forcedBasis({ row, session, heartbeatTimeoutMs, firstCommand }: Explained): string {
  const reason = (row.settlement ?? '').replace(/^forced_/, '');
  const told = `settled without runtime.terminated (${row.settlement}): told to terminate (${firstCommand ?? reason}), no runtime.terminated came within the grace period`;
  const end = row.terminated_at;
  if (!end) return `${told}; nothing ran`;
  const at = end.toISOString();
  const minutes = row.reserved_minutes;
  const reachedReserved = Number(row.closed_ms) >= minutes * 60_000;
  if (reason === 'reservation_expired' && reachedReserved) {
    return `${told}; its running time reached the ${minutes} reserved minutes at ${at}, so the hold is charged`;
  }
  if (reachedReserved) {
    return `${told}; charged up to ${at}, where its running time reached the ${minutes} reserved minutes (capped at the hold)`;
  }
  // The end cut a running interval short: it is the last sign of life plus the timeout, or the settlement itself.
  const cut = session.intervals.some((i) => i.to === null || i.to > end);
  if (!cut) return `${told}; charged up to ${at}, the end of its last running interval`;
  if (reason === 'unreachable' && row.settled_at && end.getTime() < row.settled_at.getTime()) {
    const lastSeen = new Date(end.getTime() - heartbeatTimeoutMs).toISOString();
    return `${told}; charged up to ${at} = its last sign of life (${lastSeen}) + the heartbeat timeout (${heartbeatTimeoutMs / 1000} s), capped at the hold`;
  }
  return `${told}; charged up to the forced settlement at ${at}`;
}

/** The command a forced settlement went by: the first not closed before it (one withdrawn by an extension was). */
function settlingCommand(commands: { reason: string; acknowledged_at: Date | null }[], settledAt: Date | null): string | null {
  const open = commands.find((c) => !c.acknowledged_at || (settledAt !== null && c.acknowledged_at >= settledAt));
  return open?.reason ?? null;
}
