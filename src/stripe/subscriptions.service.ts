import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AccountHooks } from 'src/accounts/account-hooks';
import { setPlanTerms } from 'src/accounts/account-writes';
import { AuditService } from 'src/audit/audit.service';
import { pageOfRows, type PageRequest, type RowsPage } from 'src/common/database/page-of-rows';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { MembersService } from 'src/members/members.service';
import { PlanCatalog, type Plan, type PlanId, type StripeBilling } from 'src/plan-catalog/plan-catalog';
import type { SubscriptionStatus } from './entities/stripe-subscription.entity';
import { StripeGateway } from './stripe-gateway';
import type { SubscriptionSnapshot } from './stripe-objects';

export interface SubscriptionRow {
  account_id: string;
  customer_id: string;
  subscription_id: string;
  base_item_id: string | null;
  seat_item_id: string | null;
  status: SubscriptionStatus;
  seat_quantity: number;
  current_period_start: Date | null;
  current_period_end: Date | null;
  state_event_created: string;
  past_due_since: Date | null;
}

export type InvoiceView = {
  invoiceId: string;
  status: string;
  periodStart: string;
  periodEnd: string;
  seatQuantity: number | null;
  activeSeats: number;
  amountCents: number;
};

export type TopUpView = {
  sessionId: string;
  pack: string;
  credits: string;
  amountCents: number | null;
  clawedBack: string;
  grantId: string;
  at: string;
};

/** A page of an account's invoices and one of its top-ups, each with how many there are in all. */
export interface BillingHistory {
  invoices: RowsPage<InvoiceView>;
  topUps: RowsPage<TopUpView>;
}

/** Statuses in which the account is on its subscription's plan (a subscription that still bills). */
const LIVE: readonly SubscriptionStatus[] = ['active', 'trialing', 'past_due', 'unpaid'];
export const isLive = (s: SubscriptionStatus): boolean => LIVE.includes(s);

/**
 * Subscriptions of the plans billed by Stripe (`billing.source: stripe_subscription`, Team as shipped):
 * created here (base + seat price) or linked from Checkout, kept as Stripe says. A subscription's plan
 * is the one whose prices it has.
 */
@Injectable()
export class SubscriptionsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly gateway: StripeGateway,
    private readonly catalog: PlanCatalog,
    private readonly members: MembersService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly accountHooks: AccountHooks,
  ) {}

  async row(
    em: Pick<EntityManager, 'query'> | undefined,
    by: { accountId?: string; subscriptionId?: string },
    lock = false,
  ): Promise<SubscriptionRow | null> {
    const [row] = await rows<SubscriptionRow>(
      em ?? this.ds,
      `SELECT * FROM stripe_subscriptions WHERE ${by.accountId ? 'account_id' : 'subscription_id'} = $1${lock ? ' FOR UPDATE' : ''}`,
      [by.accountId ?? by.subscriptionId],
    );
    return row ?? null;
  }

  /**
   * Creates the account's subscription (customer, then base + seat items with the seat count) unless
   * it has a live one; idempotency keys derived from the account (and the subscription it replaces),
   * so a retried or concurrent call creates one customer and one subscription. The plan: the
   * account's when Stripe bills it, else the one plan Stripe bills (Team as shipped).
   */
  async create(accountId: string, actor: string): Promise<{ created: boolean; view: Record<string, unknown> }> {
    const [account] = await rows<{ name: string | null; plan: PlanId }>(this.ds, `SELECT name, plan FROM accounts WHERE id = $1`, [
      accountId,
    ]);
    if (!account) throw BillingException.notFound(`Account ${accountId}`);
    const existing = await this.row(undefined, { accountId });
    if (existing && isLive(existing.status)) return { created: false, view: await this.view(accountId) };
    const stripe = this.subscriptionTerms(account.plan);
    const customerId = existing?.customer_id ?? (await this.gateway.createCustomer(accountId, account.name, `customer:${accountId}`));
    const seats = await this.members.activeSeats(undefined, accountId);
    const snapshot = await this.gateway.createSubscription(
      { customerId, accountId, basePriceId: stripe.basePrice.priceId, seatPriceId: stripe.seatPrice.priceId, seats },
      `subscription:${accountId}:${existing?.subscription_id ?? 'first'}`,
    );
    await inTransaction(this.ds, (em) =>
      this.link(em, accountId, { ...snapshot, customerId: snapshot.customerId ?? customerId }, 0, actor),
    );
    return { created: true, view: await this.view(accountId) };
  }

  /** The Stripe terms of a new subscription for an account on `planId`. */
  private subscriptionTerms(planId: PlanId): StripeBilling {
    const own = this.catalog.stripeBilling(planId);
    if (own) return own;
    const billed = this.catalog.stripeBilledPlans();
    if (billed.length === 1) return billed[0]!.billing;
    throw BillingException.invalid(
      [
        {
          field: 'plan',
          message: `set the account's plan to one Stripe bills first (${billed.map((p) => p.id).join(', ') || 'none in the plans file'})`,
        },
      ],
      'The account plan does not say which subscription to create',
    );
  }

  /**
   * Records a subscription as the account's (from our own call, Checkout or an event), and its plan:
   * the plan of its prices while it bills, that plan's fallback (Free) once it is over. `eventCreated` (Stripe seconds; 0 for API answers)
   * keeps an older event from overwriting newer state; in a tie (same second) the state already
   * there stays (invoice events set the payment status), except a cancellation, which always lands:
   * it is final in Stripe, so it lands even after an invoice event created later (the customer paid
   * the open invoice after Stripe cancelled), whose time the invoice handlers keep as the state's;
   * and a subscription leaving `incomplete` (its `created` and `updated` in the same second). Items
   * take the last event delivered of a second (two seat changes in one second, in order).
   * Another subscription replaces the account's only when the account's is over, or by a newer event:
   * a late event of a cancelled one never takes the place of the live one.
   */
  async link(em: EntityManager, accountId: string, s: SubscriptionSnapshot, eventCreated: number, actor: string): Promise<void> {
    const plan = this.catalog.planOfPrices(s.items.map((i) => i.priceId));
    const seatItem = s.items.find((i) => i.priceId === plan?.billing.seatPrice.priceId) ?? null;
    const baseItem = s.items.find((i) => i.priceId === plan?.billing.basePrice.priceId) ?? null;
    const [applied] = await rows<{ account_id: string }>(
      em,
      `INSERT INTO stripe_subscriptions AS t (account_id, customer_id, subscription_id, base_item_id, seat_item_id, status, seat_quantity,
         current_period_start, current_period_end, state_event_created, items_event_created, past_due_since, ended_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10, CASE WHEN $6 IN ('past_due', 'unpaid') THEN $11::timestamptz END, $13)
       ON CONFLICT (account_id) DO UPDATE SET customer_id = EXCLUDED.customer_id, subscription_id = EXCLUDED.subscription_id,
         base_item_id = EXCLUDED.base_item_id, seat_item_id = EXCLUDED.seat_item_id, status = EXCLUDED.status,
         seat_quantity = EXCLUDED.seat_quantity,
         current_period_start = coalesce(EXCLUDED.current_period_start, t.current_period_start),
         current_period_end = coalesce(EXCLUDED.current_period_end, t.current_period_end),
         state_event_created = GREATEST(t.state_event_created, EXCLUDED.state_event_created),
         items_event_created = GREATEST(t.items_event_created, EXCLUDED.items_event_created),
         past_due_since = CASE WHEN EXCLUDED.status IN ('past_due', 'unpaid') THEN coalesce(t.past_due_since, $11::timestamptz) END,
         -- An end, once known, stays that subscription's.
         ended_at = CASE WHEN EXCLUDED.status = 'canceled'
           THEN coalesce(CASE WHEN t.subscription_id = EXCLUDED.subscription_id THEN t.ended_at END, EXCLUDED.ended_at) END,
         updated_at = now()
       WHERE t.state_event_created < EXCLUDED.state_event_created
          OR (t.subscription_id = EXCLUDED.subscription_id AND EXCLUDED.status = 'canceled')
          OR (t.subscription_id = EXCLUDED.subscription_id AND t.state_event_created = EXCLUDED.state_event_created
              AND t.status = 'incomplete' AND EXCLUDED.status <> 'incomplete')
          OR (t.subscription_id <> EXCLUDED.subscription_id AND t.status <> ALL($12::text[]))
       RETURNING account_id`,
      [
        accountId,
        s.customerId ?? '',
        s.id,
        baseItem?.id ?? null,
        seatItem?.id ?? null,
        s.status,
        seatItem?.quantity ?? 0,
        s.currentPeriodStart,
        s.currentPeriodEnd,
        eventCreated,
        this.clock.now(),
        LIVE,
        s.status === 'canceled' ? s.endedAt : null,
      ],
    );
    if (!applied) {
      // Not newer than the state (an invoice event created later came first), but maybe newer than the
      // items: a quantity changed on Stripe's side comes only with this event, so it is kept.
      await em.query(
        `UPDATE stripe_subscriptions SET base_item_id = $3, seat_item_id = $4, seat_quantity = $5, items_event_created = $6, updated_at = now()
         WHERE account_id = $1 AND subscription_id = $2 AND items_event_created <= $6`,
        [accountId, s.id, baseItem?.id ?? null, seatItem?.id ?? null, seatItem?.quantity ?? 0, eventCreated],
      );
      return;
    }
    if (!plan) return; // prices of no plan of the catalog: the account keeps its plan
    const live = isLive(s.status);
    if (s.status === 'canceled') {
      // The terms it ended with (the move to the fallback plan drops them), for its cycles paid before the end.
      await em.query(
        `UPDATE stripe_subscriptions t SET ended_overrides = a.plan_overrides FROM accounts a
         WHERE t.account_id = $1 AND t.subscription_id = $2 AND t.ended_overrides IS NULL AND a.id = t.account_id AND a.plan = $3`,
        [accountId, s.id, plan.id],
      );
    }
    await this.setPlan(
      em,
      accountId,
      live ? plan : this.catalog.plan(plan.billing.fallbackPlan),
      live ? (s.billingCycleAnchor ?? s.currentPeriodStart) : null,
      actor,
      {
        subscriptionId: s.id,
        status: s.status,
      },
    );
  }

  /** A subscription its first paid invoice made active (it was incomplete): the account moves to the plan of the invoice's prices. */
  async startedByPayment(
    em: EntityManager,
    accountId: string,
    subscriptionId: string,
    lines: { priceId: string | null }[],
    anchor: Date,
  ): Promise<void> {
    const plan = this.catalog.planOfPrices(lines.map((l) => l.priceId));
    if (plan) await this.setPlan(em, accountId, plan, anchor, 'stripe', { subscriptionId, status: 'active' });
  }

  /**
   * Sets plan and cycle anchor; audited as `plan.changed` when either changes. A new plan runs the
   * plan-set hooks in this transaction, as an admin's change does: a downgrade to Free gets this
   * month's Free credits at once (Team's come with its paid invoice). An account on an admin-only
   * plan (Enterprise) is left alone.
   */
  private async setPlan(
    em: EntityManager,
    accountId: string,
    to: Plan,
    anchor: Date | null,
    actor: string,
    why: Record<string, unknown>,
  ): Promise<void> {
    const plan = to.id;
    const [before] = await rows<{ plan: string; billing_cycle_anchor: Date | null; plan_overrides: Record<string, unknown> | null }>(
      em,
      `SELECT plan, billing_cycle_anchor, plan_overrides FROM accounts WHERE id = $1 FOR NO KEY UPDATE`,
      [accountId],
    );
    if (!before) return;
    if (this.catalog.has(before.plan) && this.catalog.plan(before.plan).adminOnly) return; // contract terms are set by an admin, never by Stripe
    if (before.plan === plan && before.billing_cycle_anchor?.getTime() === anchor?.getTime()) return;
    // An admin's overrides were terms of the plan they were set with: another plan starts from its own
    // (a Team allowance of 800 kept on Free would grant Free 750 more at once, and 800 a month).
    const changed = before.plan !== plan;
    await setPlanTerms(em, accountId, { plan, billingCycleAnchor: anchor, ...(changed ? { overrides: null } : {}) });
    await this.audit.record(em, {
      actor,
      action: 'plan.changed',
      accountId,
      before: {
        plan: before.plan,
        billingCycleAnchor: before.billing_cycle_anchor?.toISOString() ?? null,
        ...(changed && before.plan_overrides ? { overrides: before.plan_overrides } : {}),
      },
      after: { plan, billingCycleAnchor: anchor?.toISOString() ?? null, ...why },
      at: this.clock.now(),
    });
    if (changed) await this.accountHooks.planWasSet(em, accountId);
  }

  /**
   * The account's subscription invoices and top-ups, newest first, a page of each (with the count of
   * all). An invoice's amount is its total as Stripe invoiced it; one recorded before totals were kept
   * shows the plan's prices × its seat quantity.
   */
  async billingHistory(accountId: string, pages: { invoices: PageRequest; topUps: PageRequest }): Promise<BillingHistory> {
    const [account] = await rows<{ plan: PlanId }>(this.ds, `SELECT plan FROM accounts WHERE id = $1`, [accountId]);
    const { basePrice, seatPrice } = this.catalog.invoicePrices(account?.plan ?? '');
    const [invoices, topUps] = await Promise.all([
      pageOfRows<{
        invoice_id: string;
        status: string;
        period_start: Date;
        period_end: Date;
        seat_quantity: number | null;
        active_seats: number;
        total_cents: string | null;
      }>(
        this.ds,
        `SELECT invoice_id, status, period_start, period_end, seat_quantity, active_seats, total_cents::text FROM stripe_invoices
         WHERE account_id = $1`,
        [accountId],
        'period_start DESC, invoice_id DESC',
        pages.invoices,
      ),
      pageOfRows<{
        session_id: string;
        pack: string;
        credits: string;
        amount_cents: number | null;
        clawed_back: string;
        grant_id: string;
        created_at: Date;
      }>(
        this.ds,
        `SELECT session_id, pack, credits::text, amount_cents, clawed_back::text, grant_id, created_at FROM stripe_top_ups
         WHERE account_id = $1`,
        [accountId],
        'created_at DESC, session_id DESC',
        pages.topUps,
      ),
    ]);
    return {
      invoices: {
        ...invoices,
        items: invoices.items.map((i) => ({
          invoiceId: i.invoice_id,
          status: i.status,
          periodStart: i.period_start.toISOString(),
          periodEnd: i.period_end.toISOString(),
          seatQuantity: i.seat_quantity,
          activeSeats: i.active_seats,
          amountCents:
            i.total_cents !== null ? Number(i.total_cents) : basePrice.unitAmountCents + seatPrice.unitAmountCents * (i.seat_quantity ?? 0),
        })),
      },
      topUps: {
        ...topUps,
        items: topUps.items.map((t) => ({
          sessionId: t.session_id,
          pack: t.pack,
          credits: formatCredits(BigInt(t.credits)),
          amountCents: t.amount_cents,
          clawedBack: formatCredits(BigInt(t.clawed_back)),
          grantId: t.grant_id,
          at: t.created_at.toISOString(),
        })),
      },
    };
  }

  async view(accountId: string): Promise<Record<string, unknown>> {
    const [account] = await rows<{ plan: string; status: string; billing_cycle_anchor: Date | null }>(
      this.ds,
      `SELECT plan, status, billing_cycle_anchor FROM accounts WHERE id = $1`,
      [accountId],
    );
    if (!account) throw BillingException.notFound(`Account ${accountId}`);
    const sub = await this.row(undefined, { accountId });
    return {
      accountId,
      plan: account.plan,
      accountStatus: account.status,
      billingCycleAnchor: account.billing_cycle_anchor?.toISOString() ?? null,
      seats: await this.members.activeSeats(undefined, accountId),
      subscription: sub
        ? {
            id: sub.subscription_id,
            customerId: sub.customer_id,
            status: sub.status,
            seatQuantity: sub.seat_quantity,
            currentPeriod: sub.current_period_start
              ? { start: sub.current_period_start.toISOString(), end: sub.current_period_end?.toISOString() ?? null }
              : null,
            pastDueSince: sub.past_due_since?.toISOString() ?? null,
          }
        : null,
    };
  }
}
