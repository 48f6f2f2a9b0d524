import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { sha256Hex } from 'src/common/canonical-json';
import type { Correlation } from 'src/common/context/correlation';
import { inOneRoundTrip, PipelinedSession, poolOf, type Call } from 'src/common/database/pipelined-transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { batchReadCalls, LedgerBatch } from 'src/ledger/persistence/ledger-batch';
import { createHoldOperation } from 'src/ledger/operations/create-hold';
import { LedgerService } from 'src/ledger/ledger.service';
import type { LockKey } from 'src/ledger/persistence/wallet-store';
import type { CreateHoldInput } from 'src/ledger/ledger.types';
import { withdrawUnreserved, type CommandIssuer } from 'src/messaging/commands';
import { notifyOnce } from 'src/messaging/notifications';
import { topicsOf } from 'src/messaging/topics';
import type { RuntimeRow } from 'src/metering/runtime-row';
import { AllowancesService } from 'src/plans/allowances.service';
import type { Environment } from 'src/pricing/environment';
import { holdFor } from 'src/pricing/charges';
import { priceEnvironment, type Price } from 'src/pricing/pricing';
import { environmentDigest, withoutDigest } from 'src/pricing/spec-digest';
import { RateCard } from 'src/pricing/rate-card';
import { SpendLimitsService } from 'src/spend-limits/spend-limits.service';
import { admit, type Admitted, type Decision, type KnownRuntime, type Launch } from './admission';
import { AdmissionReads, type Launcher } from './admission-reads';
import type { ReservationRequest } from './dto/reservation.dto';
import { reserveRuntimesCall, type RuntimeInsert } from 'src/metering/runtime-writes';

/**
 * Admission run against the database: the reads (admission-reads.ts) under the accounts' wallet
 * locks, the one decision (`admit`), then the writes. Two ways to run the same decision:
 *
 * - `inBatch`: launches group-committed in one pipelined transaction of two or three round trips
 *   whatever their number (BEGIN with the locks and the first reads; the counts; the holds, the
 *   runtime rows, the audit rows and COMMIT). What such a batch does not do — create a wallet,
 *   grant a period's allowance, send a notice or an alert — it hands back: those accounts' launches
 *   run `alone`.
 * - `alone`: a batch of one in a TypeORM transaction (the caller's, or one of its own), which does
 *   those things: the wallet created, the allowance granted, then the same reads, decision and
 *   writes, and the notices.
 */

/** A launch of a reservation as it waits for its batch. */
export interface ReservationLaunch {
  request: ReservationRequest;
  fingerprint: string;
  actor: string;
  /** The correlation of the launch's request (a batch runs outside it). */
  correlation?: Correlation;
  abandoned?: () => boolean;
  /** Metering's reservation of a runtime whose events came first (see Launch.ofEvents). */
  ofEvents?: boolean;
}

/** A reservation decided: reserved (its runtime row and hold), reserved already, or refused. */
export type ReservationOutcome = { reserved: { row: RuntimeRow; admitted: Admitted } } | { replay: true } | { refused: BillingException };

/** What admission needs of a launch to decide it, once its runtime is known (reservation or extension). */
export interface AdmissionAsk {
  launcher: Launcher;
  lock: LockKey & { accountId: string };
  launch(runtime: KnownRuntime | undefined): Launch;
  /** The launch's own writes once it is admitted (after the ledger's), e.g. its runtime row. */
  writes(admitted: Admitted): Call[];
  /** Who asks (audited on what the launch changes besides its hold). */
  actor?: string;
}

@Injectable()
export class ReservationBatch {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly reads: AdmissionReads,
    private readonly ledger: LedgerService,
    private readonly allowances: AllowancesService,
    private readonly spendLimits: SpendLimitsService,
    private readonly audit: AuditService,
    private readonly rateCard: RateCard,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * A batch in one pipelined transaction; returns each decided launch's outcome (after COMMIT) and
   * the launches to run alone, in arrival order. A database error fails it all (nothing committed).
   */
  async inBatch<L extends ReservationLaunch>(batch: readonly L[]): Promise<{ decided: Map<L, ReservationOutcome>; alone: L[] }> {
    const now = this.clock.now();
    const asks = new Map(batch.map((l) => [l, this.reservationAsk(l, now)]));
    const first = this.reads.first(
      batch.map((l) => asks.get(l)!.launcher),
      now,
    );
    const ledgerReads = batchReadCalls(locksOf([...asks.values()]));
    const session = await PipelinedSession.begin(poolOf(this.ds), [...ledgerReads, ...first.calls]);
    try {
      const ledger = LedgerBatch.of(session.results[1] ?? [], this.audit, topicsOf(this.config).notifications);
      const { runtimes, accounts } = first.parse(session.results.slice(ledgerReads.length));
      // An existing account without a wallet row yet runs alone (which creates it).
      const aside = new Set([...accounts.values()].filter((a) => a.terms !== null && !ledger.has(a.accountId)).map((a) => a.accountId));
      const counts = this.reads.counts(
        [...accounts.values()].filter((a) => !aside.has(a.accountId)),
        agentsOf(batch.map((l) => l.request)),
        (accountId) => ledger.lowBalanceLine(accountId)?.rises,
      );
      if (counts) for (const a of counts.parse(await session.query(counts.calls))) aside.add(a);
      // A runtime whose events came first, told to terminate for want of a reservation, runs alone (which withdraws the command).
      for (const l of batch) if (eventsCameFirst(runtimes.get(l.request.runtimeId))) aside.add(l.request.accountId);
      const taken = batch.filter((l) => !aside.has(l.request.accountId));
      const decisions = admit(
        accounts,
        taken.map((l) => asks.get(l)!.launch(runtimes.get(l.request.runtimeId))),
        ledger,
        now,
      );
      // An account whose launches send a notice or an alert runs alone (which sends them).
      taken.forEach((l, i) => {
        const d = decisions[i]!;
        if ('admitted' in d && (d.admitted.notices.length > 0 || d.admitted.alertsDue)) aside.add(l.request.accountId);
      });
      for (const a of aside) ledger.drop(a);
      const kept = taken.map((l, i) => [l, decisions[i]!] as const).filter(([l]) => !aside.has(l.request.accountId));
      // Every runtime row of the batch in one statement.
      const reserved = kept.flatMap(([l, d]) => ('admitted' in d ? [asks.get(l)!.insert] : []));
      const also = reserved.length > 0 ? [reserveRuntimesCall(reserved)] : [];
      const [inserted] = ledger.written(await session.commit(ledger.writeCalls(also)), also.length);
      const rows = reservedRows(inserted ?? []);
      const decided = new Map(kept.map(([l, d]) => [l, outcomeOf(d, () => rows.get(l.request.runtimeId)!)]));
      return { decided, alone: batch.filter((l) => aside.has(l.request.accountId)) };
    } catch (error) {
      session.abandon();
      throw error;
    }
  }

  /** A reservation alone, in the caller's transaction (`firstRows`: the rows of `firstCalls`, when the caller sent them with its BEGIN). */
  async reserveAlone(em: EntityManager, launch: ReservationLaunch, firstRows?: unknown[][]): Promise<ReservationOutcome> {
    const now = this.clock.now();
    const ask = this.reservationAsk(launch, now);
    const { decision, also } = await this.alone(em, ask, now, firstRows);
    return outcomeOf(decision, () => also[0]![0] as RuntimeRow);
  }

  /** The statements a launch alone starts with (with its BEGIN): its wallet's lock and the first reads. */
  firstCalls(ask: Pick<AdmissionAsk, 'launcher'>, now: Date = this.clock.now()): Call[] {
    return [this.ledger.lockWalletRowCall(ask.launcher.accountId), ...this.reads.first([ask.launcher], now).calls];
  }

  /** Who writes and audits the terminate commands a launch withdraws (a reservation's or an extension's). */
  commandIssuer(actor = 'system:reservations'): CommandIssuer {
    return { topic: topicsOf(this.config).commands, actor, audit: this.audit };
  }

  /**
   * A batch of one in a TypeORM transaction: the wallet lock and the first reads, the wallet created
   * and the period's allowance granted if they are missing, then the ledger's read with the counts,
   * the decision, the writes (the ledger's, then the launch's own: returned) and its notices.
   */
  async alone(
    em: EntityManager,
    ask: AdmissionAsk,
    now: Date,
    firstRows?: unknown[][],
  ): Promise<{ decision: Decision; also: unknown[][] }> {
    const accountId = ask.launcher.accountId;
    const first = this.reads.first([ask.launcher], now);
    const [locked, ...rest] = firstRows ?? (await inOneRoundTrip(em, this.firstCalls(ask, now)));
    const { runtimes, accounts } = first.parse(rest);
    const launch = ask.launch(runtimes.get(ask.launcher.runtimeId));
    const admission = accounts.get(accountId)!;
    if (launch.kind === 'reservation' && launch.runtime?.reserved) return { decision: { replay: true }, also: [] };
    if (admission.terms && admission.terms.account.status === 'active') {
      if (!locked?.length) await this.ledger.lockWalletRow(em, accountId);
      const { account, plan, period } = admission.terms;
      await this.allowances.ensure(em, account, plan, period, now);
    }
    const counts = this.reads.counts([admission], agentsOf([{ accountId, agentId: launch.agentId }]));
    const ledgerReads = batchReadCalls(locksOf([ask]));
    const read = await inOneRoundTrip(em, [...ledgerReads, ...(counts?.calls ?? [])]);
    const ledger = LedgerBatch.of(read[1] ?? [], this.audit, topicsOf(this.config).notifications);
    counts?.parse(read.slice(ledgerReads.length));
    const [decision] = admit(accounts, [launch], ledger, now);
    if (!decision || !('admitted' in decision)) return { decision: decision!, also: [] };
    const own = ask.writes(decision.admitted);
    const also = ledger.written(await inOneRoundTrip(em, ledger.writeCalls(own)), own.length);
    // Reserved now, a runtime told to terminate for want of a reservation may run: the command is withdrawn (metering does it for its own).
    if (launch.kind === 'reservation' && !launch.ofEvents && eventsCameFirst(launch.runtime)) {
      await withdrawUnreserved(em, this.commandIssuer(ask.actor), launch.runtimeId, now);
    }
    const { notices, limits, lowBalance } = decision.admitted;
    const sent = await notifyOnce(em, topicsOf(this.config).notifications, notices, now);
    // The crossing told: the wallet keeps its line, which the ledger clears when the balance comes back to it.
    if (lowBalance && sent.includes(lowBalance.cause)) await this.ledger.markLowBalance(em, accountId, lowBalance);
    if (limits.length > 0) await this.spendLimits.notifyThresholds(em, accountId, launch.userId, now, limits);
    return { decision, also };
  }

  /** A reservation as admission asks it: priced on the current rate card, its hold, its runtime row. */
  reservationAsk(l: ReservationLaunch, now: Date): AdmissionAsk & { insert: RuntimeInsert } {
    const { request } = l;
    const environment = request.environment as Environment;
    const price = priceEnvironment(this.rateCard.current(), request.variant, environment);
    const amount = holdFor(price.ratePerHourMicros, request.minutes);
    const insert: RuntimeInsert = runtimeInsert(request, price, amount, l.fingerprint, now);
    return {
      launcher: { runtimeId: request.runtimeId, accountId: request.accountId, userId: request.userId ?? null },
      lock: { accountId: request.accountId, ...holdKeys(request.runtimeId) },
      launch: (runtime) => ({
        kind: 'reservation',
        runtimeId: request.runtimeId,
        accountId: request.accountId,
        userId: request.userId ?? null,
        agentId: request.agentId ?? null,
        environment,
        amount,
        hold: createHoldOperation(reservationHold(request, price, amount, l.actor, l.correlation?.id ?? null)),
        runtime,
        abandoned: l.abandoned,
        ofEvents: l.ofEvents,
      }),
      writes: () => [reserveRuntimesCall([insert])],
      insert,
      actor: l.actor,
    };
  }
}

/** A runtime its events made known without a reservation, not ended: it may have been told to terminate as unreserved. */
function eventsCameFirst(runtime: KnownRuntime | undefined): boolean {
  return runtime !== undefined && !runtime.reserved && !runtime.ended;
}

/** Each wallet's operations' keys, for the ledger's batch read. */
function locksOf(asks: readonly Pick<AdmissionAsk, 'lock'>[]): Map<string, LockKey[]> {
  const locks = new Map<string, LockKey[]>();
  for (const { lock } of asks) locks.set(lock.accountId, [...(locks.get(lock.accountId) ?? []), lock]);
  return locks;
}

/** The agents launching on each account (their runs are counted). */
function agentsOf(launches: readonly { accountId: string; agentId?: string | null }[]): Map<string, string[]> {
  const agents = new Map<string, string[]>();
  for (const { accountId, agentId } of launches) {
    const of = agents.get(accountId) ?? [];
    if (agentId && !of.includes(agentId)) of.push(agentId);
    agents.set(accountId, of);
  }
  return agents;
}

function outcomeOf(decision: Decision, row: () => RuntimeRow): ReservationOutcome {
  if ('admitted' in decision) return { reserved: { row: row(), admitted: decision.admitted } };
  return decision;
}

// --- A reservation's rows: its runtime row (written with its hold, by metering's runtime-writes.ts) and its hold ---

/** A runtime's reservation is given this long to start before its hold is voided. */
export const START_WINDOW_MS = 15 * 60_000;

/** The hold of a reservation (the time reservation, deducted up front). */
export function reservationHold(
  request: ReservationRequest,
  price: Price,
  amount: bigint,
  actor: string,
  correlationId?: string | null,
): CreateHoldInput {
  const { holdId, idempotencyKey } = holdKeys(request.runtimeId);
  const environment = request.environment as Environment;
  return {
    accountId: request.accountId,
    holdId,
    amount,
    // Metering's sweeper voids a hold whose runtime never started; the hold itself does not expire.
    expiresAt: null,
    reference: request.runtimeId,
    idempotencyKey,
    actor,
    correlationId,
    reason: `reservation of runtime ${request.runtimeId}: ${request.minutes} minutes of ${request.variant} ${environment.sizeClass} at ${formatCredits(price.ratePerHourMicros)}/h (rate card ${price.rateCardVersion})`,
  };
}

/** The runtime row of a reservation: the rate and rate-card version it was priced with, the spec digest of its environment, its hold, its start deadline. */
export function runtimeInsert(
  request: ReservationRequest,
  price: Price,
  amount: bigint,
  requestFingerprint: string,
  now: Date,
): RuntimeInsert {
  const environment = request.environment as Environment;
  return {
    runtime_id: request.runtimeId,
    account_id: request.accountId,
    reservation_id: `res_${request.runtimeId}`,
    user_id: request.userId ?? null,
    agent_id: request.agentId ?? null,
    variant: request.variant,
    environment: withoutDigest(environment),
    size_class: environment.sizeClass,
    spec_digest: environmentDigest(environment),
    rate_per_hour: price.ratePerHourMicros.toString(),
    rate_card_version: price.rateCardVersion,
    reserved_minutes: request.minutes,
    reserved_amount: amount.toString(),
    hold_id: holdKeys(request.runtimeId).holdId,
    request_fingerprint: requestFingerprint,
    start_deadline: new Date(now.getTime() + START_WINDOW_MS).toISOString(),
    created_at: now.toISOString(),
  };
}

/**
 * A reservation's hold and the hold's idempotency key. A hold id is at most 128 characters, as a
 * runtime's: `hold_<runtime>` when that fits, otherwise `hold_` and the runtime id's SHA-256.
 */
export function holdKeys(runtimeId: string): { holdId: string; idempotencyKey: string } {
  const holdId = runtimeId.length <= 123 ? `hold_${runtimeId}` : `hold_${sha256Hex(runtimeId)}`;
  return { holdId, idempotencyKey: `reservation:${runtimeId}` };
}

/** The reservation's runtime row as RESERVE_RUNTIMES returned it, by runtime id. */
export function reservedRows(found: unknown[]): Map<string, RuntimeRow> {
  return new Map((found as RuntimeRow[]).map((r) => [r.runtime_id, r]));
}

/** A runtime's row once it is reserved (none before). */
export const RESERVED_RUNTIME = `SELECT * FROM runtimes WHERE runtime_id = $1 AND reservation_id IS NOT NULL`;

/**
 * A reserved runtime's row with the minutes its extensions added (what it was reserved with is
 * `reserved_minutes` less them), read in one statement so that both are of one moment.
 */
export const RESERVED_REQUEST = `SELECT r.*, (SELECT COALESCE(sum(e.minutes), 0) FROM reservation_extensions e WHERE e.runtime_id = r.runtime_id)::int AS extended_minutes
  FROM runtimes r WHERE r.runtime_id = $1 AND r.reservation_id IS NOT NULL`;

/**
 * The reserved runtime an extension changes, locked (the runtime, then its wallet: the order metering
 * takes them in), so that parallel extensions take turns: each prices its increase from the hold the
 * one before left, and a copy sent at the same time finds the first one's record and replays it.
 */
export const RESERVED_RUNTIME_FOR_UPDATE = `${RESERVED_RUNTIME} FOR UPDATE`;

/** An extension's idempotency record (its key, request fingerprint and minutes). */
export const PRIOR_EXTENSION = `SELECT fingerprint, minutes FROM reservation_extensions WHERE idempotency_key = $1`;
