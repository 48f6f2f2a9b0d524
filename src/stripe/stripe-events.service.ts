import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { parseCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { LedgerService } from 'src/ledger/ledger.service';
import { MembersService } from 'src/members/members.service';
import { anchorBillingCycleIfUnset } from 'src/accounts/account-writes';
import { receiveOnce } from 'src/messaging/inbox';
import { topicsOf } from 'src/messaging/topics';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import type { Period } from 'src/plan-catalog/periods';
import { chargeReversed, isReversalOf, TopUpNotRecordedYet } from './charge-reversal';
import { CycleAllowances } from './cycle-allowances';
import { NonPayment } from './non-payment';
import { SeatsService } from './seats.service';
import { StripeGateway, type StripeEventLike } from './stripe-gateway';
import { readCheckoutSession, readInvoice, readSubscription, type InvoiceSnapshot, type SubscriptionSnapshot } from './stripe-objects';
import { SubscriptionsService, isLive } from './subscriptions.service';
import { recordInvoice } from './invoice-records';
import { countRedelivery, recentWebhooks, recordOutcome, type WebhookSeen } from './webhook-log';

export const STRIPE_INBOX = 'stripe';
const ACTOR = 'stripe';

export interface EventOutcome {
  eventId: string;
  type: string;
  /** Already applied before (same event id): nothing done. */
  duplicate: boolean;
  /** A type this service does not handle, or an object it cannot tie to an account: acknowledged. */
  ignored: boolean;
  /** Acknowledged but kept out of the inbox until another event comes (a reversal before its top-up): why. */
  waiting?: string;
}

/** What an effect did: `accountId` when it touched the account's subscription (a lifted payment suspension is then applied). */
/** `after` runs once the event's transaction committed (a suspension lifted replaces it); `afterAlso` runs besides. */
export type Effect = (
  em: EntityManager,
) => Promise<{ ignored?: boolean; accountId?: string; after?: () => Promise<void>; afterAlso?: () => Promise<void> } | void>;

const chain = (first: () => Promise<void>, then: () => Promise<void>) => () => first().then(then);

/** An invoice of a subscription the account no longer bills through (it has another, live one), and that account. */
class OldSubscription {
  constructor(readonly accountId: string) {}
}

/** Statuses Stripe reports of a subscription whose payments are in order. */
const GOOD_STANDING: readonly string[] = ['active', 'trialing'];

/**
 * A subscription as Stripe reported it to the `checkout.session.completed` (of time `eventCreated`)
 * that linked it, given to the invoice events it replays: they were refused before (not linked yet).
 */
export interface LinkedByCheckout {
  subscription: SubscriptionSnapshot;
  eventCreated: number;
}

/**
 * Applies Stripe events, each once: the event id goes into the inbox in the same transaction as its
 * effect, so a redelivery (or the recovery job seeing it again) does nothing. Effects are written to
 * be safe out of order: subscription state only moves to a newer event (`created`), periods only
 * forward, top-ups are keyed by their Checkout Session and allowances by their cycle.
 */
@Injectable()
export class StripeEventsService {
  private readonly logger = new Logger('StripeEvents');

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly gateway: StripeGateway,
    private readonly subscriptions: SubscriptionsService,
    private readonly members: MembersService,
    private readonly ledger: LedgerService,
    private readonly catalog: PlanCatalog,
    private readonly nonPayment: NonPayment,
    private readonly seats: SeatsService,
    private readonly audit: AuditService,
    private readonly allowances: CycleAllowances,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async handle(event: StripeEventLike, linkedBy?: LinkedByCheckout): Promise<EventOutcome> {
    const outcome: EventOutcome = { eventId: event.id, type: event.type, duplicate: false, ignored: false };
    let after: (() => Promise<void>) | undefined;
    try {
      const effect = await this.effectOf(event, linkedBy);
      await inTransaction(this.ds, async (em) => {
        if ((await receiveOnce(em, STRIPE_INBOX, [event.id])).size === 0) {
          outcome.duplicate = true;
          await countRedelivery(em, event.id);
          return;
        }
        const result = effect ? await effect(em) : { ignored: true };
        outcome.ignored = result?.ignored ?? false;
        after = result?.after;
        if (result?.accountId) await this.nonPayment.lift(em, result.accountId);
        if (result?.afterAlso) after = after ? chain(after, result.afterAlso) : result.afterAlso;
        await recordOutcome(em, event, outcome.ignored ? 'ignored' : 'applied', result?.accountId ?? null, null, this.clock.now());
      });
    } catch (error) {
      if (error instanceof TopUpNotRecordedYet) {
        await recordOutcome(this.ds.manager, event, 'ignored', null, error.message, this.clock.now());
        return { ...outcome, ignored: true, waiting: error.message };
      }
      // Stripe retries a failed delivery; meanwhile operators see the failure and its reason.
      const reason = error instanceof Error ? error.message : String(error);
      await recordOutcome(this.ds.manager, event, 'failed', null, reason, this.clock.now()).catch(() => undefined);
      throw error;
    }
    if (after) await after();
    return outcome;
  }

  /** The most recent Stripe events received, newest first, with what came of each. */
  recentWebhooks(limit: number): Promise<WebhookSeen[]> {
    return recentWebhooks(this.ds, limit);
  }

  /** Reads the event and fetches (before the transaction) what it needs from Stripe; null: not handled. */
  private async effectOf(event: StripeEventLike, linkedBy?: LinkedByCheckout): Promise<Effect | null> {
    const object = event.data.object;
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.checkoutCompleted(event, object);
      case 'invoice.paid':
        return this.invoicePaid(event, object);
      case 'invoice.payment_failed':
        return this.invoiceFailed(event, object, linkedBy);
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted': {
        const s = readSubscription(object);
        if (!s) return null;
        const status = event.type === 'customer.subscription.deleted' ? 'canceled' : s.status;
        // An ended subscription's end: Stripe's ended_at, else the time of the event that says so.
        const endedAt = status === 'canceled' ? (s.endedAt ?? new Date(event.created * 1000)) : null;
        const snapshot: SubscriptionSnapshot = { ...s, status, endedAt };
        return (em) => this.subscriptionChanged(em, snapshot, event.created);
      }
      case 'charge.refunded':
      case 'charge.dispute.created':
        return chargeReversed(
          { audit: this.audit, clock: this.clock, actor: ACTOR, notificationsTopic: topicsOf(this.config).notifications },
          event,
          object,
        );
      default:
        return null;
    }
  }

  // ---------------------------------------------------------------- checkout

  private async checkoutCompleted(event: StripeEventLike, object: unknown): Promise<Effect | null> {
    const session = readCheckoutSession(object);
    if (!session) return null;
    const accountId = session.metadata.accountId ?? session.clientReferenceId;
    if (!accountId) return null;
    // A subscription started through Checkout: link it (read from Stripe: the event only names it).
    const subscription =
      session.subscriptionId && this.gateway.enabled ? await this.gateway.retrieveSubscription(session.subscriptionId) : null;
    return async (em) => {
      if (!(await this.accountExists(em, accountId))) return { ignored: true };
      if (subscription) {
        await this.subscriptions.link(
          em,
          accountId,
          { ...subscription, customerId: subscription.customerId ?? session.customerId },
          event.created,
          ACTOR,
        );
      }
      // A subscription linked here gets the account's seat quantity at once (it was made for the seats of
      // its checkout), and the invoices paid before it was linked (refused then, so not in the inbox).
      const linked = subscription ? { subscription, eventCreated: event.created } : undefined;
      const afterAlso = linked ? () => this.seats.requestSync(accountId).then(() => this.replayInvoices(linked)) : undefined;
      if (session.paymentStatus !== 'paid' || session.metadata.credits === undefined) {
        return subscription ? { accountId, afterAlso } : { ignored: true };
      }
      const credits = parseCredits(session.metadata.credits);
      if (credits === undefined || credits <= 0n) {
        this.logger.warn(`checkout session ${session.id}: metadata.credits ${session.metadata.credits} is not an amount of credits`);
        return { ignored: true };
      }
      // One top-up per session whatever the number of events carrying it: the session id keys the row and the grant.
      const grantId = `tup_${createHash('sha256').update(session.id).digest('hex').slice(0, 32)}`;
      // Dated when it was paid: the time of the event that says so (never later than now), not its
      // delivery, so a payment just before midnight is in that month's statement and billing history.
      const paidAt = new Date(Math.min(event.created * 1000, this.clock.now().getTime()));
      await em.query(
        `INSERT INTO stripe_top_ups (session_id, account_id, pack, credits, amount_cents, payment_intent_id, grant_id, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (session_id) DO NOTHING`,
        [
          session.id,
          accountId,
          session.metadata.pack ?? 'unknown',
          credits.toString(),
          session.amountTotal,
          session.paymentIntentId,
          grantId,
          paidAt,
        ],
      );
      const topUp = await this.ledger.grant(
        em,
        {
          accountId,
          source: 'top_up',
          amount: credits,
          expiresAt: null,
          grantId,
          idempotencyKey: `stripe-top-up:${session.id}`,
          reason: `Top-up ${session.metadata.pack ?? ''} (Stripe Checkout ${session.id})`.replace('  ', ' '),
          reference: session.id,
          actor: ACTOR,
        },
        paidAt,
      );
      await this.allowances.notifyGranted(em, accountId, `credits.granted:${grantId}`, topUp.grant, { sessionId: session.id });
      // A refund or dispute of its charge that came first (kept out of the inbox) applies now.
      const paymentIntentId = session.paymentIntentId;
      const reversals = paymentIntentId ? () => this.replayEvents((e) => isReversalOf(e, paymentIntentId)) : undefined;
      return { afterAlso: afterAlso && reversals ? chain(afterAlso, reversals) : (afterAlso ?? reversals) };
    };
  }

  // ---------------------------------------------------------------- invoices

  /**
   * The account an invoice belongs to: by its subscription, else by the subscription's metadata (fetched:
   * it may not be linked yet). `readLinked`: Stripe's record of a linked subscription is read too.
   */
  private async invoiceContext(
    object: unknown,
    readLinked = false,
  ): Promise<{ invoice: InvoiceSnapshot; unlinked: SubscriptionSnapshot | null; linked: SubscriptionSnapshot | null } | null> {
    const invoice = readInvoice(object);
    if (!invoice?.subscriptionId || !invoice.periodStart || !invoice.periodEnd) return null;
    const known = await this.subscriptions.row(undefined, { subscriptionId: invoice.subscriptionId });
    const read = (!known || readLinked) && this.gateway.enabled;
    const fetched = read ? await this.gateway.retrieveSubscription(invoice.subscriptionId).catch(() => null) : null;
    return { invoice, unlinked: known ? null : fetched, linked: readLinked ? fetched : null };
  }

  private async accountOfInvoice(
    em: EntityManager,
    ctx: { invoice: InvoiceSnapshot; unlinked: SubscriptionSnapshot | null },
    created: number,
  ): Promise<string | OldSubscription | null> {
    const row = await this.subscriptions.row(em, { subscriptionId: ctx.invoice.subscriptionId! }, true);
    if (row) return row.account_id;
    const accountId = ctx.unlinked?.metadata.accountId ?? ctx.invoice.metadata.accountId;
    if (!ctx.unlinked || !accountId || !(await this.accountExists(em, accountId))) return null;
    // The account bills through another, live, subscription: this is an invoice of an old one.
    const current = await this.subscriptions.row(em, { accountId }, true);
    if (current && isLive(current.status)) return new OldSubscription(accountId);
    await this.subscriptions.link(em, accountId, ctx.unlinked, created - 1, ACTOR);
    return (await this.subscriptions.row(em, { subscriptionId: ctx.invoice.subscriptionId! }, true))?.account_id ?? null;
  }

  /**
   * An invoice event of a subscription tied to no account: one of ours (the plans' prices), made by a
   * Checkout not completed yet, is refused (not recorded), so that Stripe, the recovery job or the
   * checkout's own replay applies it once it is linked; any other is acknowledged as ignored.
   */
  private notLinkedYet(ctx: { unlinked: SubscriptionSnapshot | null }): { ignored: true } {
    if (ctx.unlinked && this.catalog.planOfPrices(ctx.unlinked.items.map((i) => i.priceId))) {
      throw new BillingException('DL_BILLING_UNAVAILABLE', `subscription ${ctx.unlinked.id} is not linked to an account yet`);
    }
    return { ignored: true };
  }

  private async invoicePaid(event: StripeEventLike, object: unknown): Promise<Effect | null> {
    const ctx = await this.invoiceContext(object);
    if (!ctx) return null;
    return async (em) => {
      const accountId = await this.accountOfInvoice(em, ctx, event.created);
      // When it was paid: Stripe's paid_at, else this event's time.
      const invoice = { ...ctx.invoice, paidAt: ctx.invoice.paidAt ?? new Date(event.created * 1000) };
      // An invoice of an old subscription (delivered after the next one was linked) is kept for the
      // statement's fees and changes nothing else.
      if (accountId instanceof OldSubscription) {
        await this.recordInvoice(em, accountId.accountId, invoice, 'paid');
        // Paid before that subscription ended (Stripe's own record of it): its cycle, as it would have in order.
        const ended = ctx.unlinked?.endedAt;
        if (ended && invoice.billsCycle && invoice.paidAt.getTime() < ended.getTime()) {
          const cycle: Period = { start: invoice.periodStart!, end: invoice.periodEnd! };
          await this.allowances.grant(em, accountId.accountId, cycle, invoice, { overrides: null });
        }
        return {};
      }
      if (!accountId) return this.notLinkedYet(ctx);
      const period: Period = { start: invoice.periodStart!, end: invoice.periodEnd! };
      // A cancelled subscription stays cancelled: an invoice of it is kept (the statement's fees) but
      // moves no cycle; it grants its cycle's allowance only if it was paid before the subscription
      // ended (a late delivery), as it would have in order. (Paid after, and delivered before the
      // cancellation, its allowance is taken back when the cancellation comes: CycleAllowances.)
      const subscription = await this.lockedSubscription(em, accountId);
      if (subscription?.status === 'canceled') {
        await this.recordInvoice(em, accountId, invoice, 'paid');
        const paidBeforeEnd = subscription.ended_at !== null && invoice.paidAt.getTime() < subscription.ended_at.getTime();
        if (paidBeforeEnd && invoice.billsCycle) {
          await this.allowances.grant(em, accountId, period, invoice, { overrides: subscription.ended_overrides });
        }
        return { accountId };
      }
      // An invoice of prorations only (a seat change invoiced at once) is paid within the cycle: the
      // cycle stays, and its allowance was granted with the cycle's own invoice.
      const [paid] = await rows<{ status: string }>(
        em,
        `UPDATE stripe_subscriptions SET
           status = CASE WHEN state_event_created <= $2 AND status IN ('past_due', 'unpaid', 'incomplete') THEN 'active' ELSE status END,
           past_due_since = CASE WHEN state_event_created <= $2 THEN NULL ELSE past_due_since END,
           current_period_start = CASE WHEN $5 AND (current_period_start IS NULL OR current_period_start <= $3) THEN $3 ELSE current_period_start END,
           current_period_end = CASE WHEN $5 AND (current_period_start IS NULL OR current_period_start <= $3) THEN $4 ELSE current_period_end END,
           state_event_created = GREATEST(state_event_created, $2),
           updated_at = now()
         WHERE account_id = $1 RETURNING status`,
        [accountId, event.created, period.start, period.end, invoice.billsCycle],
      );
      // Its first payment made an incomplete subscription active: the account moves to its plan now, as
      // the subscription's own event would (which, in the same second, may have come first and been kept out).
      if (subscription?.status === 'incomplete' && paid?.status === 'active') {
        await this.subscriptions.startedByPayment(em, accountId, ctx.invoice.subscriptionId!, invoice.lines, period.start);
      }
      if (!invoice.billsCycle) {
        await this.recordInvoice(em, accountId, invoice, 'paid');
        return { accountId };
      }
      // Runs count per cycle from the anchor: an account without one gets this cycle's start.
      await anchorBillingCycleIfUnset(
        em,
        accountId,
        this.catalog.stripeBilledPlans().map((p) => p.id),
        period.start,
      );
      await this.recordInvoice(em, accountId, invoice, 'paid');
      await this.allowances.grant(em, accountId, period, invoice);
      return { accountId };
    };
  }

  private recordInvoice(em: EntityManager, accountId: string, invoice: InvoiceSnapshot, status: 'paid' | 'payment_failed'): Promise<void> {
    return recordInvoice(em, { catalog: this.catalog, members: this.members, clock: this.clock }, accountId, invoice, status);
  }

  private async invoiceFailed(event: StripeEventLike, object: unknown, linkedBy?: LinkedByCheckout): Promise<Effect | null> {
    // A first payment's failure delivered without the checkout that linked its subscription (Stripe's
    // retry, the recovery job: the checkout could not replay it) reads Stripe's record itself.
    const first = readInvoice(object)?.firstOfSubscription === true;
    const ctx = await this.invoiceContext(object, first && !linkedBy);
    if (!ctx) return null;
    return async (em) => {
      const linkedBefore = (await this.subscriptions.row(em, { subscriptionId: ctx.invoice.subscriptionId! }, true)) !== null;
      const accountId = await this.accountOfInvoice(em, ctx, event.created);
      if (accountId instanceof OldSubscription) return { ignored: true };
      if (!accountId) return this.notLinkedYet(ctx);
      // Stripe's current record of the subscription, read after this failure: now (this failure links
      // it, or it is the first payment's, delivered after a checkout linked the subscription without
      // replaying it), or by the checkout that linked it and replays this failure (refused before: not
      // linked), created no later than that checkout. In good standing there, the failure was made good
      // since (a retry paid; the subscription's own events follow), so it does not make it past due, as
      // it would not have in order (a first payment's failure leaves the subscription incomplete).
      const byCheckout =
        linkedBy && linkedBy.subscription.id === ctx.invoice.subscriptionId && event.created <= linkedBy.eventCreated
          ? linkedBy.subscription
          : null;
      const fromStripe = linkedBefore ? (byCheckout ?? ctx.linked) : ctx.unlinked;
      if (fromStripe && GOOD_STANDING.includes(fromStripe.status)) {
        await this.recordInvoice(em, accountId, ctx.invoice, 'payment_failed');
        return { accountId };
      }
      const now = this.clock.now();
      // Read under the subscription's lock, which invoice.paid takes too: a failure of an invoice
      // already paid (Stripe's retry that failed, delivered after the one that succeeded) is stale.
      await this.lockedSubscription(em, accountId);
      const [recorded] = await rows<{ status: string }>(em, `SELECT status FROM stripe_invoices WHERE invoice_id = $1`, [ctx.invoice.id]);
      if (recorded?.status === 'paid') return { accountId };
      const [updated] = await rows<{ past_due_since: Date | null }>(
        em,
        // A cancelled subscription stays cancelled: its last invoices' failures often come with the cancellation.
        // One that never started stays incomplete, as in Stripe (its first payment failed; the account is on Free).
        `UPDATE stripe_subscriptions SET status = CASE WHEN state_event_created <= $2 THEN 'past_due' ELSE status END,
           past_due_since = CASE WHEN state_event_created <= $2 THEN coalesce(past_due_since, $3) ELSE past_due_since END,
           state_event_created = GREATEST(state_event_created, $2), updated_at = now()
         WHERE account_id = $1 AND status NOT IN ('canceled', 'incomplete', 'incomplete_expired') RETURNING past_due_since`,
        [accountId, event.created, now],
      );
      await this.recordInvoice(em, accountId, ctx.invoice, 'payment_failed');
      if (updated?.past_due_since) await this.nonPayment.notifyPastDue(em, accountId, ctx.invoice.id, updated.past_due_since, now);
      return { accountId, after: () => this.nonPayment.suspendOverdue().then(() => undefined) };
    };
  }

  /** The account's subscription status and end, its row locked for the rest of the transaction (events of one subscription apply one at a time). */
  private async lockedSubscription(
    em: EntityManager,
    accountId: string,
  ): Promise<{ status: string; ended_at: Date | null; ended_overrides: Record<string, unknown> | null } | undefined> {
    const [row] = await rows<{ status: string; ended_at: Date | null; ended_overrides: Record<string, unknown> | null }>(
      em,
      `SELECT status, ended_at, ended_overrides FROM stripe_subscriptions WHERE account_id = $1 FOR UPDATE`,
      [accountId],
    );
    return row;
  }

  /**
   * A subscription's invoice events of the recovery window not applied yet, applied now, oldest first,
   * told what Stripe reported of the subscription to the checkout that linked it.
   */
  private replayInvoices(linked: LinkedByCheckout): Promise<void> {
    const subscriptionId = linked.subscription.id;
    return this.replayEvents((e) => e.type.startsWith('invoice.') && readInvoice(e.data.object)?.subscriptionId === subscriptionId, linked);
  }

  /** The events of the recovery window (3 days) that `which` selects, applied now, oldest first (each once: the inbox). */
  private async replayEvents(which: (event: StripeEventLike) => boolean, linkedBy?: LinkedByCheckout): Promise<void> {
    const since = new Date(this.clock.now().getTime() - 3 * 86_400_000);
    // After the event's own commit: Stripe unreachable now must not fail the delivery that was applied
    // (a retry would be a duplicate); the recovery job applies what is left.
    const listed = await this.gateway.eventsSince(since).catch((error: unknown) => {
      this.logger.warn(`could not list Stripe's events to apply the ones waiting for this one (the recovery job will): ${String(error)}`);
      return [];
    });
    for (const event of listed.filter(which)) {
      await this.handle(event, linkedBy).catch((error: unknown) =>
        this.logger.warn(`${event.type} ${event.id} not applied: ${String(error)}`),
      );
    }
  }

  // ---------------------------------------------------------------- subscriptions

  private async subscriptionChanged(
    em: EntityManager,
    s: SubscriptionSnapshot,
    created: number,
  ): Promise<{ ignored?: boolean; accountId?: string }> {
    const byId = await this.subscriptions.row(em, { subscriptionId: s.id }, true);
    let accountId = byId?.account_id ?? null;
    if (!accountId) {
      const named = s.metadata.accountId;
      if (!named || !(await this.accountExists(em, named))) return { ignored: true };
      const current = await this.subscriptions.row(em, { accountId: named }, true);
      // Another live subscription is the account's: an event of an older one does not replace it.
      if (current && current.subscription_id !== s.id && isLive(current.status) && !isLive(s.status)) return { ignored: true };
      accountId = named;
    }
    await this.subscriptions.link(em, accountId, s, created, ACTOR);
    if (s.status === 'canceled') await this.allowances.takeBackPaidAfterEnd(em, accountId, s.id);
    return { accountId };
  }

  private async accountExists(em: EntityManager, accountId: string): Promise<boolean> {
    return (await rows(em, `SELECT 1 FROM accounts WHERE id = $1`, [accountId])).length > 0;
  }
}
