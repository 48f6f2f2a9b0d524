import { randomUUID } from 'node:crypto';
import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { advisoryKey } from 'src/common/database/advisory-lock';
import { awaitingOutside, inTransaction, rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { MembersService } from 'src/members/members.service';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import { SeatPushes } from './seat-pushes';
import { StripeGateway } from './stripe-gateway';
import { SubscriptionsService, isLive, type SubscriptionRow } from './subscriptions.service';

export interface Correction {
  accountId: string;
  subscriptionId: string;
  stripeQuantity: number;
  activeSeats: number;
}

export interface ReconciliationResult {
  runId: string;
  checked: number;
  corrected: Correction[];
  failed: { accountId: string; error: string }[];
  /** How many subscriptions could not be checked (`dl_billing_job_last_problems`). */
  problems: number;
}

/** A seat push failed after the pushes before it were sent (they stay recorded as sent). */
class SentInPart extends Error {
  constructor(cause: unknown) {
    super('seat push failed', { cause });
  }
}

/**
 * Keeps each subscription's seat item (Team's, and any plan's Stripe bills per seat) at the ABSOLUTE number of active members.
 *
 * After membership changes commit, `requestSync` plans the pushes of those changes, each dated at its
 * change (SeatPushes, seat-dates.ts), then sends the planned pushes in order, each with its own key
 * and parameters however often it is retried (one sync per account at a time in this process,
 * coalescing bursts; a per-account advisory lock across instances). Reconciliation reads Stripe's
 * quantity, sets back a change made on Stripe's side dated now (a key of its own run), then sends
 * the pushes still to send at their dates.
 */
@Injectable()
export class SeatsService implements OnModuleInit {
  private readonly logger = new Logger('Seats');
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly queued = new Map<string, Promise<void>>();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly gateway: StripeGateway,
    private readonly members: MembersService,
    private readonly subscriptions: SubscriptionsService,
    private readonly catalog: PlanCatalog,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly pushes: SeatPushes,
  ) {}

  onModuleInit(): void {
    this.members.onSeatsChanged((ids) => {
      for (const id of ids) void this.requestSync(id);
    });
  }

  /** A sync that starts after this call (joins one already queued); resolves when it is done, never rejects. */
  requestSync(accountId: string): Promise<void> {
    const queued = this.queued.get(accountId);
    if (queued) return queued;
    const previous = this.inFlight.get(accountId) ?? Promise.resolve();
    const next: Promise<void> = previous.then(async () => {
      this.queued.delete(accountId);
      this.inFlight.set(accountId, next);
      try {
        await this.syncNow(accountId);
      } catch (error) {
        this.logger.warn(
          `seat sync of ${accountId} failed (reconciliation will correct it): ${error instanceof Error ? error.message : String(error)}`,
        );
      } finally {
        if (this.inFlight.get(accountId) === next) this.inFlight.delete(accountId);
      }
    });
    this.queued.set(accountId, next);
    return next;
  }

  /** Waits for every sync started so far (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0 || this.queued.size > 0) await Promise.all([...this.inFlight.values(), ...this.queued.values()]);
  }

  private async syncNow(accountId: string): Promise<void> {
    if (!this.gateway.enabled) return;
    await this.pushes.plan(accountId);
    await this.underSeatLock(accountId, async (em, sub) => {
      if (!sub.seat_item_id) return;
      await this.sendPending(em, sub, sub.current_period_start);
    });
  }

  /**
   * Sends the account's planned pushes in order, each as planned (its key, quantity and date), and
   * records Stripe's quantity. A push dated before `periodStart` (planned before the period renewed)
   * is dated at the period start; one for a seat item the subscription no longer has is dropped. A
   * failure stops the sending: what was sent stays recorded (the transaction commits) and the
   * failure is thrown after, so the next sync sends the rest, the failed push first, unchanged.
   */
  private async sendPending(em: EntityManager, sub: SubscriptionRow, periodStart: Date | null): Promise<number | null> {
    let quantity: number | null = null;
    let failure: unknown = null;
    for (let push of await this.pushes.pending(em, sub.account_id)) {
      if (push.item_id !== sub.seat_item_id) {
        await this.pushes.markDropped(em, push.id);
        continue;
      }
      if (periodStart && push.proration_date < periodStart) push = await this.pushes.redate(em, push, periodStart);
      const { item_id: itemId, idempotency_key: key, proration_date: date } = push;
      try {
        quantity = await this.stripe(em, () => this.gateway.setItemQuantity(itemId, push.quantity, key, date));
      } catch (error) {
        failure = error;
        break;
      }
      await this.pushes.markSent(em, push.id);
    }
    if (quantity !== null && quantity !== sub.seat_quantity) {
      await this.recordQuantity(em, sub, quantity, 'seats.synced', 'system:seat-sync', null);
    }
    if (failure !== null) throw new SentInPart(failure);
    return quantity;
  }

  /** Runs `work` in a transaction holding the account's seat lock, with its live subscription (skipped without one). */
  private async underSeatLock(accountId: string, work: (em: EntityManager, sub: SubscriptionRow) => Promise<void>): Promise<void> {
    // A push that failed after others were sent: the transaction commits what was sent, then it fails.
    const failure = await inTransaction(this.ds, async (em) => {
      await em.query(`SELECT pg_advisory_xact_lock($1)`, [advisoryKey(`seats:${accountId}`)]);
      const sub = await this.subscriptions.row(em, { accountId });
      if (!sub || !isLive(sub.status)) return null;
      try {
        await work(em, sub);
        return null;
      } catch (error) {
        if (error instanceof SentInPart) return error;
        throw error;
      }
    });
    if (failure) throw failure.cause;
  }

  /**
   * A call to Stripe in the seat transaction: it may take longer than the server lets a transaction
   * sit idle (DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS), so that bound is raised to the call's for its
   * length. Meanwhile the transaction holds the seat lock only (it has read, not written yet).
   */
  private stripe<T>(em: EntityManager, call: () => Promise<T>): Promise<T> {
    return awaitingOutside(em, this.gateway.longestCallMs, call);
  }

  private async recordQuantity(
    em: EntityManager,
    sub: SubscriptionRow,
    quantity: number,
    action: string,
    actor: string,
    runId: string | null,
  ): Promise<void> {
    await em.query(`UPDATE stripe_subscriptions SET seat_quantity = $2, updated_at = now() WHERE account_id = $1`, [
      sub.account_id,
      quantity,
    ]);
    await this.audit.record(em, {
      actor,
      action,
      accountId: sub.account_id,
      before: { subscriptionId: sub.subscription_id, quantity: sub.seat_quantity },
      after: { subscriptionId: sub.subscription_id, quantity, ...(runId ? { runId } : {}) },
      at: this.clock.now(),
    });
  }

  /**
   * Seat reconciliation: every live subscription's seat quantity, read from Stripe, against the
   * members table; drift is corrected (absolute quantity), recorded as a discrepancy and audited.
   */
  async reconcile(): Promise<ReconciliationResult> {
    const runId = randomUUID();
    const subs = await rows<{ account_id: string }>(
      this.ds,
      `SELECT account_id FROM stripe_subscriptions WHERE status IN ('active', 'trialing', 'past_due', 'unpaid') ORDER BY account_id`,
    );
    const result: ReconciliationResult = { runId, checked: 0, corrected: [], failed: [], problems: 0 };
    let firstFailure: unknown;
    for (const { account_id: accountId } of subs) {
      try {
        await this.pushes.plan(accountId);
        await this.underSeatLock(accountId, async (em, sub) => {
          const remote = await this.stripe(em, () => this.gateway.retrieveSubscription(sub.subscription_id));
          result.checked += 1;
          const item = remote.items.find((i) => this.catalog.isSeatPrice(i.priceId));
          if (!item) throw new Error(`subscription ${sub.subscription_id} has no seat item`);
          let current: SubscriptionRow = { ...sub, seat_item_id: item.id };
          // What Stripe should have now, before the pushes still to send: a difference is a change made on
          // Stripe's side (we have no date for it), set back dated now; ours are then sent at their dates.
          // Before the first push to an item, Stripe has the quantity the subscription began with (Checkout's):
          // the pending pushes set it, dated from the period start, and there is nothing to compare yet.
          const pending = (await this.pushes.pending(em, accountId)).filter((p) => p.item_id === item.id);
          const last = await this.pushes.lastSent(em, item.id);
          const expected = pending[0]
            ? last
              ? pending[0].from_quantity
              : item.quantity
            : (last?.quantity ?? (await this.settledSeats(em, accountId)) ?? item.quantity);
          let stripeQuantity = item.quantity;
          if (item.quantity !== expected) {
            stripeQuantity = await this.setBackNow(em, current, item.quantity, expected, remote.currentPeriodStart, runId, result);
            current = { ...current, seat_quantity: stripeQuantity };
          } else if (pending.length === 0 && sub.seat_quantity !== item.quantity) {
            await em.query(`UPDATE stripe_subscriptions SET seat_quantity = $2 WHERE account_id = $1`, [accountId, item.quantity]);
          }
          const sent = await this.sendPending(em, current, remote.currentPeriodStart);
          if (sent !== null) current = { ...current, seat_quantity: (stripeQuantity = sent) };
          // Every push sent, Stripe has the members (less the changes not planned yet). Not so only if
          // changes reached the members without their steps (received before the steps were kept):
          // corrected dated now, as before.
          const settled = await this.settledSeats(em, accountId);
          if (settled !== null && stripeQuantity !== settled) {
            await this.setBackNow(em, current, stripeQuantity, settled, remote.currentPeriodStart, runId, result);
          }
        });
      } catch (error) {
        firstFailure ??= error;
        result.failed.push({ accountId, error: error instanceof Error ? error.message : String(error) });
      }
    }
    result.problems = result.failed.length;
    // A run that could check no subscription at all (Stripe down) failed: it says why, as a failed job.
    if (subs.length > 0 && result.failed.length === subs.length) throw firstFailure;
    return result;
  }

  /**
   * Sets the seat item to `to` dated now (a difference with no change date of ours), recorded as
   * corrected drift. Dated at the period's start instead when our clock reads before it (Stripe's
   * clock ahead of ours, a period begun a moment ago): Stripe refuses a date before the period.
   */
  private async setBackNow(
    em: EntityManager,
    sub: SubscriptionRow,
    from: number,
    to: number,
    periodStart: Date | null,
    runId: string,
    result: ReconciliationResult,
  ): Promise<number> {
    const itemId = sub.seat_item_id!;
    const now = this.clock.now();
    const date = periodStart && now < periodStart ? periodStart : now;
    const push = await this.pushes.insert(
      em,
      { ...sub, seat_item_id: itemId },
      { quantity: to, fromQuantity: from, date },
      'reconcile',
      `reconcile:${runId}`,
    );
    const quantity = await this.stripe(em, () => this.gateway.setItemQuantity(itemId, to, push.idempotency_key, date));
    await this.pushes.markSent(em, push.id);
    await em.query(
      `INSERT INTO stripe_seat_discrepancies (kind, account_id, subscription_id, stripe_quantity, active_seats, detected_at, corrected_at)
       VALUES ('quantity_drift', $1, $2, $3, $4, $5, $5)`,
      [sub.account_id, sub.subscription_id, from, to, now],
    );
    await this.recordQuantity(em, { ...sub, seat_quantity: from }, quantity, 'seats.reconciled', 'system:seat-reconciliation', runId);
    result.corrected.push({ accountId: sub.account_id, subscriptionId: sub.subscription_id, stripeQuantity: from, activeSeats: to });
    return quantity;
  }

  /**
   * The active members less the changes not planned yet, as of one state: null when a membership
   * change committed between the reads (the next run looks again).
   */
  private async settledSeats(em: EntityManager, accountId: string): Promise<number | null> {
    const before = await this.pushes.unplanned(em, accountId);
    const seats = await this.members.activeSeats(em, accountId);
    const after = await this.pushes.unplanned(em, accountId);
    return before.which === after.which && before.delta === after.delta ? Math.max(0, seats - after.delta) : null;
  }

  async discrepancies(accountId?: string): Promise<Record<string, unknown>[]> {
    const found = await rows<{
      id: string;
      kind: string;
      account_id: string;
      subscription_id: string;
      invoice_id: string | null;
      stripe_quantity: number;
      active_seats: number;
      detected_at: Date;
      corrected_at: Date | null;
      resolved_at: Date | null;
      resolved_by: string | null;
    }>(
      this.ds,
      `SELECT * FROM stripe_seat_discrepancies WHERE ($1::text IS NULL OR account_id = $1) ORDER BY detected_at DESC, id LIMIT 1000`,
      [accountId ?? null],
    );
    return found.map((d) => ({
      id: d.id,
      kind: d.kind,
      accountId: d.account_id,
      subscriptionId: d.subscription_id,
      invoiceId: d.invoice_id,
      stripeQuantity: d.stripe_quantity,
      activeSeats: d.active_seats,
      detectedAt: d.detected_at.toISOString(),
      correctedAt: d.corrected_at?.toISOString() ?? null,
      resolvedAt: d.resolved_at?.toISOString() ?? null,
      resolvedBy: d.resolved_by,
    }));
  }
}
