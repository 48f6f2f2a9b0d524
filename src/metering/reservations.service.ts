import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { fingerprint } from '../common/canonical-json';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { currentCorrelation, withCorrelationOf, type Correlation } from '../common/context/correlation';
import { GroupCommitLanes, takeDistinct } from '../common/database/group-commit';
import { inOneRoundTrip, inTransactionFrom, PipelinedSession, poolOf, type Call } from '../common/database/pipelined-transaction';
import { inTransaction, isUniqueViolation, rows } from '../common/database/transaction';
import { BillingException } from '../common/errors/billing.exception';
import { formatCredits } from '../common/money';
import { Clock } from '../infra/clock/clock';
import { topicsOf } from '../messaging/topics';
import { AuditService } from '../audit/audit.service';
import { batchReadCalls, LedgerBatch } from '../ledger/ledger.batch';
import { LedgerService } from '../ledger/ledger.service';
import type { Balance } from '../ledger/ledger.types';
import { loadPlanAccount, lockAndLoadPlanAccount, planAccountOf, type PlanAccount } from '../plans/plan-accounts';
import { PlanCatalog } from '../plans/plan-catalog';
import { QuotasService } from '../plans/quotas.service';
import type { Environment } from '../pricing/environment';
import { holdFor, chargeFor } from '../pricing/charges';
import { priceEnvironment } from '../pricing/pricing';
import { RateCard } from '../pricing/rate-card';
import { SpendLimitsService, type LimitRow } from '../spend-limits/spend-limits.service';
import { LaunchGuard } from './launch-guard';
import {
  abandonedLaunch,
  AccountLaunches,
  activeOnly,
  holdKeys,
  launchReadCall,
  launchRows,
  needsReadCall,
  needsRows,
  ownRuntime,
  reservedRows,
  reservationHold,
  reserveRuntimesCall,
  runtimeInsert,
  type LaunchOutcome,
} from './reservation-batch';
import type { ReservationRequest } from './dto/reservation.dto';
import { runningMsOf, type RuntimeRow } from './runtime-row';

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

/**
 * Reservations: the launch checks in the contract's order, then the runtime's time reservation
 * deducted up front as a ledger hold, in one transaction. Idempotent on runtimeId.
 */
@Injectable()
export class ReservationsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly ledger: LedgerService,
    private readonly rateCard: RateCard,
    private readonly guard: LaunchGuard,
    private readonly spendLimits: SpendLimitsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly quotas: QuotasService,
    private readonly catalog: PlanCatalog,
    private readonly audit: AuditService,
  ) {}

  /**
   * Returns the reservation and whether it was created now (201) or already existed (200).
   * `abandoned` tells whether the caller has gone (its connection closed): a request that waited
   * for a database connection past its client's patience is not worked on — under overload the
   * service then spends itself on requests someone still waits for, and nothing is reserved for
   * nobody (a retry with the same runtimeId reserves as usual).
   */
  async reserve(request: ReservationRequest, opts: { abandoned?: () => boolean; actor?: string } = {}): Promise<{ created: boolean; view: ReservationView }> {
    if (opts.abandoned?.()) throw abandonedLaunch(request.runtimeId);
    const launch: PendingLaunch = {
      request,
      fingerprint: fingerprint(request),
      actor: opts.actor ?? RESERVATION_ACTOR,
      correlation: currentCorrelation(),
      abandoned: opts.abandoned,
      answer: () => undefined,
    };
    const answer = await new Promise<BatchAnswer>((resolve, reject) => {
      launch.answer = (a) => (a.error !== undefined ? reject(a.error) : resolve(a));
      this.lanes.push(request.accountId, launch);
    });
    if (answer.view) return { created: true, view: answer.view };
    if (answer.alone) return answer.alone;
    return this.replay(request.runtimeId, launch.fingerprint);
  }

  /**
   * Launches group-committed (GroupCommitLanes, by account): a batch is one transaction of two round
   * trips whatever its size (three when its accounts' checks count something). BEGIN, the lock of
   * all its wallets (sorted) and the reads of the wallets, accounts, runtimes and spend limits; then
   * what its accounts' checks count (reservation-batch.ts); the launches decided in memory, account
   * by account in arrival order; then one statement writing every hold, one every runtime row, the
   * audit rows and COMMIT. Answers are given after COMMIT. Launches a batch does not take (an
   * allowance to grant, a notice to send) run on their own after it, in arrival order; if the batch
   * fails in the database, all of its launches do.
   */
  private async runBatch(batch: PendingLaunch[]): Promise<void> {
    const byAccount = new Map<string, PendingLaunch[]>();
    for (const launch of batch) byAccount.set(launch.request.accountId, [...(byAccount.get(launch.request.accountId) ?? []), launch]);
    let session: PipelinedSession | undefined;
    let decided: Map<PendingLaunch, LaunchOutcome>;
    let alone: PendingLaunch[];
    let reserved: Map<string, RuntimeRow>;
    try {
      const locks = new Map([...byAccount].map(([a, items]) => [a, items.map((l) => ({ accountId: a, ...holdKeys(l.request.runtimeId) }))]));
      session = await PipelinedSession.begin(poolOf(this.ds), [...batchReadCalls(locks), launchReadCall(batch.map((l) => l.request))]);
      let ledger: LedgerBatch;
      ({ ledger, decided, alone } = await this.decideBatch(session, byAccount));
      const inserts = [...decided.values()].flatMap((o) => ('reserved' in o ? [o.reserved.insert] : []));
      const also = inserts.length > 0 ? [reserveRuntimesCall(inserts)] : [];
      const [insertedRows] = ledger.written(await session.commit(ledger.writeCalls(also)), also.length);
      reserved = reservedRows(insertedRows ?? []);
    } catch (error) {
      session?.abandon();
      // Nothing of the batch is committed: each launch runs again on its own.
      this.logger.warn(`a batch of ${batch.length} reservations failed (${String(error)}); running them one by one`);
      this.stats.failedBatches++;
      this.stats.alone += batch.length;
      await this.oneByOne(batch);
      return;
    }
    for (const [launch, outcome] of decided) {
      if ('refused' in outcome) launch.answer({ error: outcome.refused });
      else if ('replay' in outcome) launch.answer({});
      else {
        const { insert, hold, runsRemaining } = outcome.reserved;
        launch.answer({ view: this.viewOf(reserved.get(insert.runtime_id)!, hold().balance, runsRemaining) });
      }
    }
    this.stats.batches++;
    this.stats.decided += decided.size;
    this.stats.alone += alone.length;
    await this.oneByOne(alone.sort((x, y) => batch.indexOf(x) - batch.indexOf(y)));
  }

  /** The batch's launches decided on what its first round trip read (and, if they need it, the counts of a second). */
  private async decideBatch(
    session: PipelinedSession,
    byAccount: Map<string, PendingLaunch[]>,
  ): Promise<{ ledger: LedgerBatch; decided: Map<PendingLaunch, LaunchOutcome>; alone: PendingLaunch[] }> {
    const now = this.clock.now();
    const [, wallets, launches] = session.results;
    const ledger = LedgerBatch.of(wallets ?? [], this.audit);
    const rows = launchRows(launches ?? []);
    const decided = new Map<PendingLaunch, LaunchOutcome>();
    const alone: PendingLaunch[] = [];
    const deciders = new Map<string, AccountLaunches>();
    for (const [a, items] of byAccount) {
      const decider = AccountLaunches.of(this.catalog, items.map((l) => ({ request: l.request, row: rows.get(l.request.runtimeId) })), ledger.has(a), now);
      if (decider) deciders.set(a, decider);
      else alone.push(...items);
    }
    const needs = needsReadCall([...deciders.values()]);
    if (needs) {
      for (const [a, counted] of needsRows((await session.query([needs]))[0] ?? [])) deciders.get(a)!.counted(counted);
    }
    const rateCard = this.rateCard.current();
    for (const [a, decider] of deciders) {
      const items = byAccount.get(a)!;
      const outcomes = decider.fallback ? [] : decider.decide(items.map((l) => ({ ...l, now, rateCard })), ledger);
      if (decider.fallback) {
        this.logger.debug(`the launches of ${a} run on their own: ${decider.fallback}`);
        ledger.drop(a);
        alone.push(...items);
        continue;
      }
      items.forEach((l, i) => decided.set(l, outcomes[i]!));
    }
    return { ledger, decided, alone };
  }

  /** Launches each in a transaction of its own, one after the other in the order they came, before the lane takes its next batch. */
  private async oneByOne(launches: PendingLaunch[]): Promise<void> {
    for (const launch of launches) {
      await withCorrelationOf(launch.correlation, () => this.reserveAlone(launch)).then(
        (alone) => launch.answer({ alone }),
        (error: unknown) => launch.answer({ error }),
      );
    }
  }

  private readonly lanes = new GroupCommitLanes<PendingLaunch>(LANES, (queue) => takeDistinct(queue, MAX_BATCH, (l) => [l.request.runtimeId]), (batch) =>
    this.runBatch(batch),
  );
  private readonly logger = new Logger('Reservations');
  /** Counters of the batches (for tests and diagnostics): launches decided in batches, and those run on their own. */
  readonly stats = { batches: 0, decided: 0, alone: 0, failedBatches: 0 };

  /** One launch in a transaction of its own (what a batch leaves to it). */
  private async reserveAlone(launch: PendingLaunch): Promise<{ created: boolean; view: ReservationView }> {
    const { request, fingerprint: requestFingerprint, actor } = launch;
    const unlessAbandoned = (): void => {
      if (launch.abandoned?.()) throw abandonedLaunch(request.runtimeId);
    };
    unlessAbandoned();
    let view: ReservationView | 'reserved';
    try {
      view = await inTransactionFrom(this.ds, this.launchCalls(request), (em, firstRows) => {
        unlessAbandoned();
        return this.create(em, request, requestFingerprint, actor, firstRows);
      });
    } catch (error) {
      // A concurrent request for the same runtime won the race: answer as a replay (or a conflict).
      const winner = isUniqueViolation(error) ? await this.existing(request.runtimeId, requestFingerprint) : null;
      if (winner) return { created: false, view: winner };
      throw error;
    }
    if (view !== 'reserved') return { created: true, view };
    return this.replay(request.runtimeId, requestFingerprint);
  }

  /** Reserved already (a retry, or a copy that waited for the first one's lock): a replay, or a conflict if the request differs. */
  private async replay(runtimeId: string, requestFingerprint: string): Promise<{ created: boolean; view: ReservationView }> {
    const existing = await this.existing(runtimeId, requestFingerprint);
    if (!existing) throw new Error(`runtime ${runtimeId} was reserved, and its reservation is gone`);
    return { created: false, view: existing };
  }

  private async existing(runtimeId: string, requestFingerprint: string): Promise<ReservationView | null> {
    const [row] = await rows<RuntimeRow>(this.ds, RESERVED_RUNTIME, [runtimeId]);
    if (!row) return null;
    if (row.request_fingerprint !== requestFingerprint) {
      throw new BillingException(
        'DL_BILLING_IDEMPOTENCY_CONFLICT',
        `Runtime ${runtimeId} already has a reservation made with a different request`,
        [],
        { reservationId: row.reservation_id },
      );
    }
    return this.view(this.ds.manager, row);
  }

  /** Creates the reservation in the caller's transaction (used to reserve a runtime on the fly). */
  async createWithin(em: EntityManager, request: ReservationRequest, actor: string): Promise<ReservationView> {
    const view = await this.create(em, request, fingerprint(request), actor);
    if (view === 'reserved') throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', `Runtime ${request.runtimeId} is already reserved`);
    return view;
  }

  /**
   * The launch's first round trip: the account's wallet lock, then (so that they read what the lock
   * holder before us committed) the account, whether the runtime is reserved already and the spend
   * limits in scope, and the wallet's ledger as the hold will need it. An account without a wallet
   * row yet (or no account) takes the longer way.
   */
  private launchCalls(request: ReservationRequest): Call[] {
    const { accountId, runtimeId } = request;
    return [
      this.ledger.lockWalletRowCall(accountId),
      launchReadCall([request]),
      this.ledger.holdReadCall({ accountId, ...holdKeys(runtimeId) }),
    ];
  }

  /** `firstRows`: the rows of launchCalls, when the caller sent them (with its BEGIN). */
  private async lockForLaunch(em: EntityManager, request: ReservationRequest, firstRows?: unknown[][]): Promise<Launch | 'reserved'> {
    const { accountId, runtimeId } = request;
    const [locked, launch, ledgerRead] = firstRows ?? (await inOneRoundTrip(em, this.launchCalls(request)));
    const row = launchRows(launch ?? []).get(runtimeId);
    if (row?.reserved) return 'reserved';
    ownRuntime(request, row?.runtime_account ?? null);
    // An account without a wallet row yet (or no account) takes the longer way.
    if (!locked?.length || !row?.id) return { account: await this.lockActiveAccount(em, accountId) };
    const account = planAccountOf(row);
    if (!account) throw BillingException.notFound(`Account ${accountId}`);
    return { account: activeOnly(account), limits: row.spend_limits, ledgerRead };
  }

  /** The reservation in the caller's transaction, or 'reserved' when the runtime has one already. */
  private async create(
    em: EntityManager,
    request: ReservationRequest,
    requestFingerprint: string,
    actor: string,
    firstRows?: unknown[][],
  ): Promise<ReservationView | 'reserved'> {
    const now = this.clock.now();
    const launch = await this.lockForLaunch(em, request, firstRows);
    if (launch === 'reserved') return launch;
    const { account } = launch;
    const environment = request.environment as Environment;
    const price = priceEnvironment(this.rateCard.current(), request.variant, environment);
    const amount = holdFor(price.ratePerHourMicros, request.minutes);
    const verdict = await this.guard.check({
      em,
      account,
      runtimeId: request.runtimeId,
      userId: request.userId ?? null,
      agentId: request.agentId ?? null,
      environment,
      amount,
      now,
      kind: 'reservation',
    });
    // The spend limit is the last check before the credits.
    const limits = await this.spendLimits.check(em, { accountId: request.accountId, userId: request.userId ?? null, amount, now }, launch.limits);
    // The runtime row goes with the hold's write (same round trip). A runtime whose events arrived
    // before its reservation already has a row: the reservation is attached to it.
    const { hold, also } = await this.ledger.createHoldWith(em, reservationHold(request, price, amount, actor), verdict.walletChanged ? undefined : launch.ledgerRead, [
      reserveRuntimesCall([runtimeInsert(request, price, amount, requestFingerprint, now)]),
    ]);
    // (A runtime reserved meanwhile fails the statement as a serialization failure: the transaction
    // runs again and then finds it reserved.)
    const row = also[0]![0] as RuntimeRow;
    await verdict.afterHold(hold.balance.available);
    if (limits.length > 0) await this.spendLimits.notifyThresholds(em, request.accountId, request.userId ?? null, now, limits);
    return this.viewOf(row, hold.balance, verdict.runsRemaining);
  }

  /**
   * Takes the account's wallet lock (first in the lock order: launches of one account are checked
   * one at a time) and reads the account under it; refuses an unknown or suspended account.
   */
  async lockActiveAccount(em: EntityManager, accountId: string): Promise<PlanAccount> {
    let account = await lockAndLoadPlanAccount(em, accountId);
    if (!account) {
      // An account without its wallet row yet (or no account: then this is a 404).
      await this.ledger.lockWalletRow(em, accountId);
      account = await loadPlanAccount(em, accountId);
    }
    if (!account) throw BillingException.notFound(`Account ${accountId}`);
    return activeOnly(account);
  }

  /** Adds minutes to a reservation: the hold grows by their price at the reservation's own rate. */
  async extend(runtimeId: string, minutes: number, idempotencyKey: string, actor = RESERVATION_ACTOR): Promise<ReservationView> {
    return inTransaction(this.ds, async (em) => {
      const now = this.clock.now();
      const [row] = await rows<RuntimeRow>(em, RESERVED_RUNTIME, [runtimeId]);
      if (!row?.hold_id) throw BillingException.notFound(`Reservation of runtime ${runtimeId}`);
      const key = `extend:${runtimeId}:${idempotencyKey}`;
      // The hold covers the whole reserved time, rounded once: extensions of 10 + 20 + 30 minutes hold
      // what 60 minutes cost, not three rounded-up parts. The extension holds the difference.
      const increase = max0(holdFor(BigInt(row.rate_per_hour), row.reserved_minutes + minutes) - BigInt(row.reserved_amount));
      const [prior] = await rows<{ fingerprint: string }>(em, `SELECT fingerprint FROM reservation_extensions WHERE idempotency_key = $1`, [key]);
      const requestFingerprint = fingerprint({ runtimeId, minutes });
      if (prior) {
        if (prior.fingerprint !== requestFingerprint) {
          throw new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was used for a different extension');
        }
        return this.view(em, row);
      }
      if (row.status === 'settled' || row.status === 'voided') {
        throw new BillingException('DL_BILLING_REQUEST_INVALID', `The reservation of ${runtimeId} is ${row.status}`, [
          { field: 'runtimeId', message: `reservation is ${row.status}` },
        ]);
      }
      const account = await this.lockActiveAccount(em, row.account_id);
      const verdict = await this.guard.check({
        em,
        account,
        runtimeId,
        userId: row.user_id,
        agentId: row.agent_id,
        environment: row.environment as unknown as Environment,
        amount: increase,
        now,
        kind: 'extension',
      });
      const limits = await this.spendLimits.check(em, { accountId: row.account_id, userId: row.user_id, amount: increase, now });
      const hold =
        increase > 0n
          ? await this.ledger.increaseHold(em, {
              holdId: row.hold_id,
              amount: increase,
              idempotencyKey: key,
              actor,
              reason: `extension of runtime ${runtimeId}'s reservation by ${minutes} minutes`,
            })
          : { balance: await this.ledger.wallet(em, row.account_id) };
      await em.query(`INSERT INTO reservation_extensions (idempotency_key, runtime_id, minutes, amount, fingerprint) VALUES ($1, $2, $3, $4, $5)`, [
        key,
        runtimeId,
        minutes,
        increase.toString(),
        requestFingerprint,
      ]);
      const [updated] = await rows<RuntimeRow>(
        em,
        `UPDATE runtimes SET reserved_minutes = reserved_minutes + $2, reserved_amount = reserved_amount + $3, updated_at = now()
         WHERE runtime_id = $1 RETURNING *`,
        [runtimeId, minutes, increase.toString()],
      );
      await verdict.afterHold(hold.balance.available);
      if (limits.length > 0) await this.spendLimits.notifyThresholds(em, row.account_id, row.user_id, now, limits);
      return this.view(em, updated ?? row);
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

  /** Charge so far: settled charge, or the running time up to now priced at the reservation's rate. */
  chargeSoFar(row: RuntimeRow, now: Date): bigint {
    if (row.status === 'settled' || row.status === 'voided') return BigInt(row.charged);
    const charge = chargeFor(BigInt(row.rate_per_hour), runningMsOf(row, now));
    const cap = BigInt(row.reserved_amount);
    return charge < cap ? charge : cap;
  }

  get commandsTopic(): string {
    return topicsOf(this.config).commands;
  }
}

function max0(n: bigint): bigint {
  return n > 0n ? n : 0n;
}

/** A launch waiting in a lane, and how it is answered. */
interface PendingLaunch {
  request: ReservationRequest;
  fingerprint: string;
  actor: string;
  /** The caller's correlation, captured when it was queued (its batch runs outside it). */
  correlation?: Correlation;
  abandoned?: () => boolean;
  answer(answer: BatchAnswer): void;
}

/** Created in the batch (`view`), refused (`error`), run on its own (`alone`), or none: reserved already. */
interface BatchAnswer {
  view?: ReservationView;
  alone?: { created: boolean; view: ReservationView };
  error?: unknown;
}

/**
 * Concurrent batches of launches per process (each holds one connection while it runs): two keep
 * the database working while Node decides the next batch.
 */
const LANES = 2;
const MAX_BATCH = 64;

/** Who reserves, in the audit log, when the caller does not say (a key's requests say `key:<id>`). */
const RESERVATION_ACTOR = 'system:reservations';

/** A runtime's row once it is reserved (none before). */
const RESERVED_RUNTIME = `SELECT * FROM runtimes WHERE runtime_id = $1 AND reservation_id IS NOT NULL`;

/** What a launch read with its wallet lock (limits and the ledger read: when it took the short way). */
interface Launch {
  account: PlanAccount;
  limits?: LimitRow[];
  ledgerRead?: unknown[];
}

/**
 * When the reservation runs out: before the start, the start deadline; while running, the moment
 * running time reaches the reserved minutes if it keeps running; once over, when it ended.
 */
export function expiresAt(row: RuntimeRow, now: Date): Date {
  const reservedMs = row.reserved_minutes * 60_000;
  if (row.status === 'reserved') return new Date(Math.max(row.start_deadline?.getTime() ?? 0, row.created_at.getTime() + reservedMs));
  if (row.terminated_at) return row.terminated_at;
  const remaining = Math.max(0, reservedMs - runningMsOf(row, now));
  return new Date(now.getTime() + remaining);
}
