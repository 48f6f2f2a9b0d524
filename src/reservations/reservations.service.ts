import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { fingerprint } from 'src/common/canonical-json';
import { currentCorrelation, withCorrelationOf } from 'src/common/context/correlation';
import { GroupCommitLanes, takeDistinct } from 'src/common/database/group-commit';
import { inTransactionFrom } from 'src/common/database/pipelined-transaction';
import { isDatabaseTimeout } from 'src/common/database/query-bounds';
import { inTransaction, isUniqueViolation, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { increaseHoldOperation } from 'src/ledger/operations/increase-hold';
import { namespacedKey } from 'src/ledger/operations/operation';
import { LedgerService } from 'src/ledger/ledger.service';
import type { Balance } from 'src/ledger/ledger.types';
import { QuotasService } from 'src/plans/quotas.service';
import type { Environment } from 'src/pricing/environment';
import { holdFor } from 'src/pricing/charges';
import { runningMsOf, type RuntimeRow } from 'src/metering/runtime-row';
import { abandonedLaunch, ownRuntime } from './admission';
import type { ReservationRequest } from './dto/reservation.dto';
import { extensionDifferences, requestDifferences, reservedRequest } from './request-differences';
import {
  PRIOR_EXTENSION,
  RESERVED_REQUEST,
  RESERVED_RUNTIME,
  RESERVED_RUNTIME_FOR_UPDATE,
  ReservationBatch,
  type ReservationLaunch,
  type ReservationOutcome,
} from './reservation-batch';
import { extendRuntimeCall, resumeWithoutCommands } from 'src/metering/runtime-writes';
import { withdrawCommands } from 'src/messaging/commands';

export interface ReservationView {
  reservationId: string;
  runtimeId: string;
  status: string;
  ratePerHour: string;
  minutes: number;
  reserved: string;
  /** The spec digest of the environment priced (null for a reservation made before digests were kept). */
  specDigest: string | null;
  expiresAt: string;
  balance: { total: string; held: string; available: string };
  runsRemaining: number | null;
}

/** The reasons of a runtime's open terminate commands. */
const OPEN_COMMANDS = `SELECT DISTINCT reason FROM runtime_commands WHERE runtime_id = $1 AND acknowledged_at IS NULL ORDER BY reason`;

/**
 * Reservations: a launch admitted (admission.ts: the contract's checks, then the credits) and its
 * time reservation deducted up front as a ledger hold, with its runtime row, in one transaction.
 * Idempotent on runtimeId. Launches are group-committed in lanes by account (ReservationBatch).
 */

@Injectable()
export class ReservationsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly batches: ReservationBatch,
    private readonly ledger: LedgerService,
    private readonly clock: Clock,
    private readonly quotas: QuotasService,
  ) {}

  /**
   * Returns the reservation and whether it was created now (201) or already existed (200).
   * `abandoned` tells whether the caller has gone (its connection closed): a request that waited
   * for a database connection past its client's patience is not worked on — under overload the
   * service then spends itself on requests someone still waits for, and nothing is reserved for
   * nobody (a retry with the same runtimeId reserves as usual).
   */
  async reserve(
    request: ReservationRequest,
    opts: { abandoned?: () => boolean; actor?: string } = {},
  ): Promise<{ created: boolean; view: ReservationView }> {
    if (opts.abandoned?.()) throw abandonedLaunch(request.runtimeId);
    // Back-pressure: past MAX_QUEUED launches waiting, the service is behind by more than its callers
    // wait for; a request answered now costs nothing and holds no memory while it waits.
    if (this.lanes.queued >= this.maxQueued) throw overloaded(request.runtimeId);
    const launch: PendingLaunch = {
      request,
      fingerprint: fingerprint(request),
      actor: opts.actor ?? RESERVATION_ACTOR,
      correlation: currentCorrelation(),
      abandoned: opts.abandoned,
      answer: () => undefined,
    };
    const outcome = await new Promise<ReservationOutcome>((resolve, reject) => {
      launch.answer = (a) => ('error' in a ? reject(a.error) : resolve(a.outcome));
      this.lanes.push(request.accountId, launch);
    });
    return this.answerOf(outcome, launch);
  }

  /**
   * A batch of the lane (ReservationBatch.inBatch), answered after its COMMIT; the launches it
   * hands back run alone after it, in arrival order. If it fails in the database (nothing of it is
   * committed), each of its launches runs alone.
   */
  private async runBatch(batch: PendingLaunch[]): Promise<void> {
    let result: { decided: Map<PendingLaunch, ReservationOutcome>; alone: PendingLaunch[] };
    try {
      result = await this.batches.inBatch(batch);
    } catch (error) {
      if (isDatabaseTimeout(error)) {
        // The database did not answer in time: each launch alone would wait as long again, one after
        // the other. Each is answered 503 now; the batch is wholly committed or not at all (a COMMIT
        // sent may have reached the database), and a retry with the same runtimeId finds or makes it.
        this.logger.warn(`a batch of ${batch.length} reservations failed (${String(error)}); answering each 503`);
        for (const launch of batch) launch.answer({ error });
        return;
      }
      this.logger.warn(`a batch of ${batch.length} reservations failed (${String(error)}); running them one by one`);
      this.stats.failedBatches++;
      this.stats.alone += batch.length;
      await this.oneByOne(batch);
      return;
    }
    for (const [launch, outcome] of result.decided) launch.answer({ outcome });
    this.stats.batches++;
    this.stats.decided += result.decided.size;
    this.stats.alone += result.alone.length;
    await this.oneByOne(result.alone);
  }

  /** Launches each alone, one after the other in the order they came, before the lane takes its next batch. */
  private async oneByOne(launches: PendingLaunch[]): Promise<void> {
    for (const launch of launches) {
      await withCorrelationOf(launch.correlation, () => this.reserveAlone(launch)).then(
        (outcome) => launch.answer({ outcome }),
        (error: unknown) => launch.answer({ error }),
      );
    }
  }

  private readonly lanes = new GroupCommitLanes<PendingLaunch>(
    LANES,
    (queue) => takeDistinct(queue, MAX_BATCH, (l) => [l.request.runtimeId]),
    (batch) => this.runBatch(batch),
  );
  private readonly logger = new Logger('Reservations');
  /** Counters of the batches (for tests and diagnostics): launches decided in batches, and those run alone. */
  readonly stats = { batches: 0, decided: 0, alone: 0, failedBatches: 0 };
  /** Launches that may wait in the lanes at once (MAX_QUEUED; tests lower it). */
  maxQueued = MAX_QUEUED;

  /** One launch in a transaction of its own (BEGIN with its first reads). */
  private async reserveAlone(launch: ReservationLaunch): Promise<ReservationOutcome> {
    if (launch.abandoned?.()) throw abandonedLaunch(launch.request.runtimeId);
    const ask = this.batches.reservationAsk(launch, this.clock.now());
    try {
      return await inTransactionFrom(this.ds, this.batches.firstCalls(ask), (em, firstRows) =>
        this.batches.reserveAlone(em, launch, firstRows),
      );
    } catch (error) {
      // A concurrent request for the same runtime won the race: answer as a replay (or a conflict).
      if (isUniqueViolation(error) && (await this.existing(launch))) return { replay: true };
      throw error;
    }
  }

  /** The answer to a launch: created (201), reserved already (a replay: 200, or 409 if the request differs), or its refusal. */
  private async answerOf(outcome: ReservationOutcome, launch: ReservationLaunch): Promise<{ created: boolean; view: ReservationView }> {
    if ('refused' in outcome) throw outcome.refused;
    if ('reserved' in outcome) {
      const { row, admitted } = outcome.reserved;
      return { created: true, view: this.viewOf(row, admitted.hold!().balance, admitted.runsRemaining) };
    }
    const existing = await this.existing(launch);
    if (!existing) throw new Error(`runtime ${launch.request.runtimeId} was reserved, and its reservation is gone`);
    return { created: false, view: existing };
  }

  /**
   * The reservation a launch's runtime has already: its view when the launch repeats its request (a
   * replay), 409 when the request differs. Another account's reservation is named by nothing but
   * the finding that the runtime is not this account's.
   */
  private async existing(launch: ReservationLaunch): Promise<ReservationView | null> {
    const { runtimeId, accountId } = launch.request;
    const [row] = await rows<RuntimeRow>(this.ds, RESERVED_RUNTIME, [runtimeId]);
    if (!row) return null;
    ownRuntime(runtimeId, accountId, row.account_id);
    if (row.request_fingerprint !== launch.fingerprint) {
      // Read again with its extensions' minutes, in one statement (one snapshot), to name what differs.
      const [made] = await rows<RuntimeRow & { extended_minutes: number }>(this.ds, RESERVED_REQUEST, [runtimeId]);
      throw new BillingException(
        'DL_BILLING_IDEMPOTENCY_CONFLICT',
        `Runtime ${runtimeId} already has a reservation made with a different request`,
        requestDifferences(made ? reservedRequest(made, made.extended_minutes) : null, launch.request),
        { reservationId: row.reservation_id },
      );
    }
    return this.view(this.ds.manager, row);
  }

  /** Creates the reservation in the caller's transaction (a runtime reserved on the fly): the same admission, alone. */
  async createWithin(em: EntityManager, request: ReservationRequest, actor: string): Promise<ReservationView> {
    const launch: ReservationLaunch = { request, fingerprint: fingerprint(request), actor, ofEvents: true };
    const outcome = await this.batches.reserveAlone(em, launch);
    if ('replay' in outcome) {
      throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', `Runtime ${request.runtimeId} is already reserved`);
    }
    return (await this.answerOf(outcome, launch)).view;
  }

  /**
   * Adds minutes to a reservation: the hold grows by their price at the reservation's own rate,
   * admitted as a launch of kind `extension` (account active → plan allows it → spend limit → credits).
   */
  async extend(runtimeId: string, minutes: number, idempotencyKey: string, actor = RESERVATION_ACTOR): Promise<ReservationView> {
    return inTransaction(this.ds, async (em) => {
      const now = this.clock.now();
      const [row] = await rows<RuntimeRow>(em, RESERVED_RUNTIME_FOR_UPDATE, [runtimeId]);
      if (!row?.hold_id) throw BillingException.notFound(`Reservation of runtime ${runtimeId}`);
      const key = namespacedKey(`extend:${runtimeId}`, idempotencyKey);
      // The hold covers the whole reserved time, rounded once: extensions of 10 + 20 + 30 minutes hold
      // what 60 minutes cost, not three rounded-up parts. The extension holds the difference.
      const increase = max0(holdFor(BigInt(row.rate_per_hour), row.reserved_minutes + minutes) - BigInt(row.reserved_amount));
      const [prior] = await rows<{ fingerprint: string; minutes: number }>(em, PRIOR_EXTENSION, [key]);
      const requestFingerprint = fingerprint({ runtimeId, minutes });
      if (prior) {
        if (prior.fingerprint !== requestFingerprint) {
          throw new BillingException(
            'DL_BILLING_IDEMPOTENCY_CONFLICT',
            'This Idempotency-Key was used for a different extension',
            extensionDifferences(prior, runtimeId, minutes),
          );
        }
        return this.view(em, row);
      }
      if (row.status === 'settled' || row.status === 'voided') {
        throw new BillingException('DL_BILLING_REQUEST_INVALID', `The reservation of ${runtimeId} is ${row.status}`, [
          { field: 'runtimeId', message: `reservation is ${row.status}` },
        ]);
      }
      // Told to terminate for another reason than its reservation running out: refused by admission
      // (after the account, plan and spend-limit checks, whose refusals say more).
      const open = await rows<{ reason: string }>(em, OPEN_COMMANDS, [runtimeId]);
      const told = open.map((c) => c.reason).filter((reason) => reason !== 'reservation_expired');
      const hold =
        increase > 0n
          ? increaseHoldOperation({
              holdId: row.hold_id,
              amount: increase,
              idempotencyKey: key,
              actor,
              reason: `extension of runtime ${runtimeId}'s reservation by ${minutes} minutes`,
            })
          : null;
      const { decision, also } = await this.batches.alone(
        em,
        {
          launcher: { runtimeId, accountId: row.account_id, userId: row.user_id },
          lock: { accountId: row.account_id, holdId: row.hold_id, idempotencyKey: key },
          launch: () => ({
            kind: 'extension',
            runtimeId,
            accountId: row.account_id,
            userId: row.user_id,
            agentId: row.agent_id,
            environment: row.environment as unknown as Environment,
            amount: increase,
            hold,
            runtime: undefined,
            told,
          }),
          writes: () => [extendRuntimeCall({ key, runtimeId, minutes, amount: increase, fingerprint: requestFingerprint })],
        },
        now,
      );
      if ('refused' in decision) throw decision.refused;
      // Extended past its running time, a runtime told its reservation ran out may run on: that command
      // is withdrawn, and with no other open it is running again (not re-told, nor settled at its hold).
      const extended = also[0]![0] as RuntimeRow;
      const runsOn = runningMsOf(extended, now) < extended.reserved_minutes * 60_000;
      if (
        runsOn &&
        open.length > 0 &&
        (await withdrawCommands(em, this.batches.commandIssuer(), runtimeId, 'reservation_expired', now)) > 0
      ) {
        await resumeWithoutCommands(em, runtimeId);
        const [resumed] = await rows<RuntimeRow>(em, RESERVED_RUNTIME, [runtimeId]);
        return this.view(em, resumed!);
      }
      return this.view(em, extended);
    });
  }

  async view(em: Pick<EntityManager, 'query'>, row: RuntimeRow): Promise<ReservationView> {
    const wallet = (await this.ledger.wallet(em as EntityManager, row.account_id)) ?? { total: 0n, held: 0n, available: 0n };
    return this.viewOf(row, wallet, await this.quotas.runsRemaining(em, row.account_id));
  }

  private viewOf(row: RuntimeRow, wallet: Pick<Balance, 'total' | 'held' | 'available'>, runsRemaining: number | null): ReservationView {
    return {
      reservationId: row.reservation_id ?? '',
      runtimeId: row.runtime_id,
      status: row.status,
      ratePerHour: formatCredits(BigInt(row.rate_per_hour)),
      minutes: row.reserved_minutes,
      reserved: formatCredits(BigInt(row.reserved_amount)),
      specDigest: row.spec_digest,
      expiresAt: expiresAt(row, this.clock.now()).toISOString(),
      balance: {
        total: formatCredits(wallet.total),
        held: formatCredits(wallet.held),
        available: formatCredits(wallet.available),
      },
      runsRemaining,
    };
  }
}

function max0(n: bigint): bigint {
  return n > 0n ? n : 0n;
}

/** A launch waiting in a lane, and how it is answered. */
interface PendingLaunch extends ReservationLaunch {
  answer(answer: { outcome: ReservationOutcome } | { error: unknown }): void;
}

/**
 * Concurrent batches of launches per process (each holds one connection while it runs). One: on
 * 2 cores shared with PostgreSQL, a second lane made smaller batches and more CPU for the same
 * launches, and a longer tail (at 1,000/s alone, p50 7.0 against 10.8-11.0 ms and p99 47-73
 * against 66-102 ms, three runs each; the same peak, 2,486 against 2,532/s; docs/benchmarks.md).
 */
const LANES = 1;
const MAX_BATCH = 64;
/**
 * Launches waiting for a batch, across the lanes, before new ones are refused (503 with
 * `retryAfterSeconds`): about half a second of the service's peak rate. Beyond it a launch would
 * wait longer than callers do, and every one waiting holds its request, its socket and its
 * decision's objects: without a bound an overload grows the service's memory without limit.
 */
const MAX_QUEUED = 1_024;

/** A launch refused because too many are waiting: nothing is reserved, and a retry may succeed. */
function overloaded(runtimeId: string): BillingException {
  return new BillingException(
    'DL_BILLING_UNAVAILABLE',
    `Too many reservations are waiting: runtime ${runtimeId} was not reserved; try again shortly`,
    [],
    { retryAfterSeconds: 1 },
  );
}

/** Who reserves, in the audit log, when the caller does not say (a key's requests say `key:<id>`). */
const RESERVATION_ACTOR = 'system:reservations';

/**
 * When the reservation runs out: before the start, the start deadline; while running, the moment
 * running time reaches the reserved minutes if it keeps running (in the past once it has); paused, if
 * it resumed now; once over, when it ended.
 */
export function expiresAt(row: RuntimeRow, now: Date): Date {
  const reservedMs = row.reserved_minutes * 60_000;
  // Not started yet, also once told to terminate (a suspension or a lowered limit tells a reserved
  // runtime too): the time it has to start, not a moment that moves with `now`.
  if (row.status === 'reserved' || notStarted(row)) {
    return new Date(Math.max(row.start_deadline?.getTime() ?? 0, row.created_at.getTime() + reservedMs));
  }
  if (row.terminated_at) return row.terminated_at;
  // Running: the instant its running time reaches (or reached: past its minutes, awaiting its end) the
  // reserved minutes, the same at every reading.
  if (row.open_since) return new Date(row.open_since.getTime() + reservedMs - Number(row.closed_ms));
  // Paused: if it resumed now.
  const remaining = Math.max(0, reservedMs - runningMsOf(row, now));
  return new Date(now.getTime() + remaining);
}

function notStarted(row: RuntimeRow): boolean {
  return row.started_at === null && row.open_since === null && Number(row.closed_ms) === 0 && row.terminated_at === null;
}
