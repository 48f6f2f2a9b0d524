import { Inject, Injectable, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { inOneRoundTrip, type Call } from 'src/common/database/pipelined-transaction';
import { preparedRows } from 'src/common/database/prepared';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { inTransaction } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { topicsOf } from 'src/messaging/topics';
import { adjustOperation } from './operations/adjust-hold';
import { balanceNow } from './operations/balance';
import { createHoldOperation } from './operations/create-hold';
import { expireGrantBatch } from './operations/expire-grants';
import { grantOperation } from './operations/grant';
import { grantInBulk, type BulkGrantInput, type BulkGrantResult } from './operations/grant-in-bulk';
import { increaseHoldOperation } from './operations/increase-hold';
import { resolveOperation } from './operations/resolve-hold';
import * as reads from './persistence/ledger-reads';
import { LedgerRunner, type BatchItem } from './persistence/ledger-runner';
import { LedgerStore } from './persistence/wallet-store';
import { lowBalanceMarkCall } from './persistence/ledger-batch';
import type {
  AdjustHoldInput,
  AdjustResult,
  Balance,
  CreateHoldInput,
  Discrepancy,
  ExpireGrantsResult,
  GrantInput,
  GrantResult,
  HoldResult,
  HoldView,
  IncreaseHoldInput,
  ResolveOptions,
  ResolveResult,
  SettleHoldInput,
  StatementEntry,
  WalletView,
} from './ledger.types';

/**
 * The credit ledger: wallets, grants, two-phase holds and their double-entry transactions.
 *
 * Every write method takes the caller's EntityManager, so a caller can put a hold, its own rows
 * and its outbox messages in one transaction; the `…Tx` wrappers run the operation in a
 * transaction of their own in two round trips (BEGIN travels with the lock, COMMIT with the
 * writes), retried on deadlock or serialization failure.
 *
 * Each operation is: lock and read the wallet (one statement), decide in code (operations/, one
 * file per operation, on core/), write one transaction (one statement: transaction, entries, grants, holds,
 * allocations and wallet together), then its audit row (one statement).
 *
 * Lock order (the same in every transaction, so none can deadlock on another): the wallet row first
 * (SELECT … FOR UPDATE), then the grants, holds and allocations of that wallet (only the wallet's
 * lock holder writes them), then the audit chain head (always last). A caller that locks rows of its
 * own in the same transaction takes them always on the same side of the wallet (metering: its
 * runtime rows, sorted, before the wallet) or calls `lockWallet` first. Jobs and batches that lock
 * several wallets (reservations, metering's `runBatch`) lock them in account-id order, in one
 * statement. Idempotency keys are unique per account.
 */
@Injectable()
export class LedgerService {
  private readonly runner: LedgerRunner;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    /** For the notifications topic (the contract's name without it). */
    @Optional() @Inject(APP_CONFIG) private readonly config?: Pick<AppConfig, 'topics'>,
  ) {
    this.runner = new LedgerRunner(ds, audit, clock, topicsOf(config ?? {}).notifications);
  }

  /** Counters of the own-transaction path (for tests and diagnostics). */
  get stats(): LedgerRunner['stats'] {
    return this.runner.stats;
  }

  /** Runs `work` in a transaction of its own, retried on deadlock or serialization failure. */
  transact<T>(work: (em: EntityManager) => Promise<T>): Promise<T> {
    return inTransaction(this.ds, work);
  }

  // ---------------------------------------------------------------- writes in the caller's transaction

  /**
   * Grants credits (a new grant pays the wallet's debt first). Creates the wallet if the account has
   * none. `at` as settleHold's (a top-up: when Stripe says it was paid).
   */
  grant(em: EntityManager, input: GrantInput, at?: Date): Promise<GrantResult> {
    return this.runner.runIn(em, grantOperation(input), at);
  }

  /**
   * Reserves `amount` up front: credits move from the wallet's grants (burn order) to the hold, so
   * the available balance drops at once. Refused with DL_BILLING_INSUFFICIENT_CREDITS (details
   * `available`, `required`) when the available balance, every open hold already deducted, is short.
   * `at` as settleHold's.
   */
  createHold(em: EntityManager, input: CreateHoldInput, at?: Date): Promise<HoldResult> {
    return this.runner.runIn(em, createHoldOperation(input), at);
  }

  /**
   * createHold, with `read` (the rows of holdReadCall, when the caller sent it ahead) and `also`:
   * statements sent in the same round trip as the hold's write, after it (a reservation's runtime
   * row); returns their rows too. A replayed hold writes nothing: `also` then goes alone. An error in
   * any of them aborts the caller's transaction.
   */
  async createHoldWith(
    em: EntityManager,
    input: CreateHoldInput,
    read: unknown[] | undefined,
    also: Call[],
  ): Promise<{ hold: HoldResult; also: unknown[][] }> {
    const [hold, rowsOfAlso] = await this.runner.runInWith(em, createHoldOperation(input), read, also);
    return { hold, also: rowsOfAlso };
  }

  /**
   * The statement createHold starts with (lock the wallet, read its ledger), for a caller that sends
   * it ahead in one of its own round trips, after taking the wallet's lock (a reservation: with its
   * checks' reads). Its rows go to createHoldWith as `read`; a caller that wrote to the wallet in between
   * must not pass them (they would be stale: the write then fails on the wallet version, and retries).
   */
  holdReadCall(lock: { accountId: string; holdId: string; idempotencyKey: string }): Call {
    return LedgerStore.lockCall(lock);
  }

  /** Holds `amount` more on an open hold (a reservation's extension); refused like createHold when it would overdraw. */
  increaseHold(em: EntityManager, input: IncreaseHoldInput): Promise<HoldResult> {
    return this.runner.runIn(em, increaseHoldOperation(input));
  }

  /**
   * Settles an open hold: charges `amount` (capped at the hold) from its allocations in burn order
   * and releases the rest to its grants (expired at once for grants that expired meanwhile).
   * A hold resolves once: calling again (settle, void or expire) returns the first outcome.
   */
  settleHold(em: EntityManager, input: SettleHoldInput, at?: Date): Promise<ResolveResult> {
    return this.runner.runIn(em, resolveOperation(input.holdId, 'settle', input.amount, input), at);
  }

  /** Releases the whole hold (e.g. the launch failed). */
  voidHold(em: EntityManager, holdId: string, opts: ResolveOptions = {}): Promise<ResolveResult> {
    return this.runner.runIn(em, resolveOperation(holdId, 'void', 0n, opts));
  }

  /** Releases the whole hold because it expired unsettled. */
  expireHold(em: EntityManager, holdId: string, opts: ResolveOptions = {}): Promise<ResolveResult> {
    return this.runner.runIn(em, resolveOperation(holdId, 'expire', 0n, opts));
  }

  /**
   * Corrects a settled charge (a late event changed it) with a new transaction: charging more takes
   * from the wallet's grants in burn order, and what they cannot cover is recorded as debt (repaid
   * first by the next credits that come in); refunding cancels the hold's debt first, then gives
   * credits back to the grants they came from (expired at once if the grant has expired).
   * newCharge is capped at the hold's amount; no change writes nothing. `at` (settleHold's too): the
   * instant the caller decided at, which dates the transaction (now otherwise).
   */
  adjustSettledHold(em: EntityManager, input: AdjustHoldInput, at?: Date): Promise<AdjustResult> {
    return this.runner.runIn(em, adjustOperation(input), at);
  }

  /**
   * Many operations (operations/: settlements, corrections, …) in the caller's transaction as one
   * set-based batch: every wallet they touch, and those of `alsoLock`, locked once in account-id
   * order and read in one round trip, the operations decided in memory in the order given (each on
   * its wallet's state with the ones before it applied: the same decisions as one at a time), then
   * every transaction with its audit rows written in one round trip. A refusal throws and writes
   * nothing. Returns the answers in the order of `items`. `at`: the instant the caller decided at,
   * which dates the transactions (now otherwise).
   */
  runBatch(em: EntityManager, items: readonly BatchItem[], alsoLock: readonly string[] = [], at?: Date): Promise<unknown[]> {
    return this.runner.runManyIn(em, items, alsoLock, at);
  }

  /** One grant per account for thousands of accounts (the monthly reset), set-based, in the caller's transaction. */
  grantInBulk(em: EntityManager, input: Omit<BulkGrantInput, 'notificationsTopic'>): Promise<BulkGrantResult> {
    return grantInBulk(em, this.audit, { ...input, notificationsTopic: topicsOf(this.config ?? {}).notifications });
  }

  /** Creates the account's (empty) wallet if it has none; DL_BILLING_NOT_FOUND for an unknown account. */
  ensureWallet(em: EntityManager, accountId: string): Promise<void> {
    return reads.ensureWallet(em, accountId);
  }

  /** Takes the wallet's row lock (first in the lock order) and returns its balance. */
  async lockWallet(em: EntityManager, accountId: string): Promise<Balance> {
    const state = await this.runner.lockIn(em, { lock: { accountId }, createsWallet: true, decide: () => ({ write: null, result: null }) });
    return balanceNow(state, this.clock.now());
  }

  /**
   * Sets the wallet's low-balance line with the `wallet.low_balance` that announced it (the caller
   * holds the wallet's lock): the write statements clear it, counting one more rise, when the
   * available balance comes back to it.
   */
  async markLowBalance(em: EntityManager, accountId: string, mark: { line: bigint; rises: bigint }): Promise<void> {
    await inOneRoundTrip(em, [lowBalanceMarkCall(accountId, mark)]);
  }

  /** lockWalletRow's statement, for a caller that sends it ahead with its own reads (it returns no row without a wallet). */
  lockWalletRowCall(accountId: string): Call {
    return LedgerStore.lockOnlyCall({ accountId });
  }

  /**
   * Only the wallet's row lock (first in the lock order), without reading its ledger: for callers
   * that count or check under the lock and write through the ledger afterwards (a reservation).
   */
  async lockWalletRow(em: EntityManager, accountId: string): Promise<void> {
    const call = LedgerStore.lockOnlyCall({ accountId });
    if ((await preparedRows(em, call.statement.name, call.statement.text, call.values)).length > 0) return;
    await this.ensureWallet(em, accountId);
    await preparedRows(em, call.statement.name, call.statement.text, call.values);
  }

  // ---------------------------------------------------------------- the same, each in its own transaction

  grantTx(input: GrantInput): Promise<GrantResult> {
    return this.runner.runPipelined(grantOperation(input));
  }
  createHoldTx(input: CreateHoldInput): Promise<HoldResult> {
    return this.runner.runPipelined(createHoldOperation(input));
  }
  increaseHoldTx(input: IncreaseHoldInput): Promise<HoldResult> {
    return this.runner.runPipelined(increaseHoldOperation(input));
  }
  settleHoldTx(input: SettleHoldInput): Promise<ResolveResult> {
    return this.runner.runPipelined(resolveOperation(input.holdId, 'settle', input.amount, input));
  }
  voidHoldTx(holdId: string, opts: ResolveOptions = {}): Promise<ResolveResult> {
    return this.runner.runPipelined(resolveOperation(holdId, 'void', 0n, opts));
  }
  expireHoldTx(holdId: string, opts: ResolveOptions = {}): Promise<ResolveResult> {
    return this.runner.runPipelined(resolveOperation(holdId, 'expire', 0n, opts));
  }
  adjustSettledHoldTx(input: AdjustHoldInput): Promise<AdjustResult> {
    return this.runner.runPipelined(adjustOperation(input));
  }

  /**
   * Expires every grant whose `expiresAt` has passed: its unheld remainder goes to the wallet's
   * `expired` account (held parts expire when their hold releases them). Set-based, in batches of
   * wallets locked in account-id order, one transaction per batch.
   */
  async expireGrants(now: Date = this.clock.now(), batchSize = 500): Promise<ExpireGrantsResult> {
    const total: ExpireGrantsResult = { grants: 0, wallets: 0, amount: 0n };
    const deps = { audit: this.audit, notificationsTopic: topicsOf(this.config ?? {}).notifications };
    for (;;) {
      const batch = await this.transact((em) => expireGrantBatch(em, deps, now, batchSize));
      if (!batch) return total;
      total.grants += batch.grants;
      total.wallets += batch.wallets;
      total.amount += batch.amount;
    }
  }

  /** Expires every open hold whose `expiresAt` has passed (one short transaction per hold). */
  async expireHolds(now: Date = this.clock.now(), limit = 1000): Promise<ResolveResult[]> {
    const results: ResolveResult[] = [];
    for (const id of await reads.dueHoldIds(this.ds, now, limit)) {
      results.push(await this.expireHoldTx(id, { actor: 'system:hold-expiry', reason: 'the hold expired' }));
    }
    return results;
  }

  // ---------------------------------------------------------------- reads

  /**
   * The wallet now: balances and the unexpired grants with credits left, in burn order. An account
   * without a wallet yet has an empty one; an unknown account is DL_BILLING_NOT_FOUND.
   */
  wallet(em: EntityManager | undefined, accountId: string): Promise<WalletView> {
    return reads.walletView(em ?? this.ds, accountId, this.clock.now());
  }

  hold(em: EntityManager | undefined, holdId: string): Promise<HoldView | null> {
    return reads.holdView(em ?? this.ds, holdId);
  }

  /** The account's transactions, newest first; `cursor` is the id of the last one of the previous page. */
  statement(accountId: string, opts: { cursor?: string; limit: number }): Promise<{ items: StatementEntry[]; nextCursor: string | null }> {
    return reads.statementPage(this.ds, accountId, opts);
  }

  /** Σ settled charges (and corrections) posted in [from, to). */
  consumedBetween(accountId: string, from: Date, to: Date): Promise<bigint> {
    return reads.consumedBetween(this.ds, accountId, from, to);
  }

  accountExists(accountId: string): Promise<boolean> {
    return reads.accountExists(this.ds, accountId);
  }

  /**
   * Checks the ledger's invariants and returns every discrepancy (none when healthy): each
   * transaction's entries sum to zero, every stored balance (wallet columns, grants' remaining,
   * open holds' amounts) equals the sum of its entries, holds' charges equal their allocations
   * plus debt, and the wallet's debt equals its holds' debt.
   */
  reconcile(accountId?: string): Promise<Discrepancy[]> {
    return reads.reconcile(this.ds, accountId);
  }
}
