import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { LedgerService } from 'src/ledger/ledger.service';
import type { GrantView } from 'src/ledger/ledger.types';
import { notifyOnce } from 'src/messaging/notifications';
import { topicsOf } from 'src/messaging/topics';
import { allowanceGrantId, allowanceReason, cycleAllowanceKey, cycleGrantId } from 'src/plans/allowance-keys';
import { planTermsAt } from 'src/plans/plan-history';
import { PlanCatalog } from 'src/plan-catalog/plan-catalog';
import type { Period } from 'src/plan-catalog/periods';
import { clawBack } from './clawback';
import type { InvoiceSnapshot } from './stripe-objects';

const ACTOR = 'stripe';

/**
 * The credits a paid invoice brings (Team: 500 a cycle), and their return when the invoice turns out
 * to have been paid after its subscription ended: a cycle paid after the end grants nothing, whichever
 * of `invoice.paid` and the cancellation Stripe delivers first.
 */
@Injectable()
export class CycleAllowances {
  constructor(
    private readonly ledger: LedgerService,
    private readonly catalog: PlanCatalog,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * The cycle's included credits, once per cycle, expiring at its end, on the terms the account had
   * when the invoice was paid (its plan changes since, from its audit chain, undone; `paidAt` is
   * Stripe's second, and a change in that same second counts as made before the payment): those of
   * its plan then when they come with a paid invoice (Team, with its overrides then), else those of
   * the plan of the invoice's prices (an account not on it yet, or on Free since, with the terms its
   * subscription ended with: `ended`). An account on an admin-only plan (Enterprise) when the invoice
   * was paid gets its plan's credits by its own period, never from a Stripe invoice; one moved there
   * after paying gets the cycle it paid for, whether the move or the invoice is delivered first.
   */
  async grant(
    em: EntityManager,
    accountId: string,
    period: Period,
    invoice: InvoiceSnapshot,
    ended?: { overrides: Record<string, unknown> | null },
  ): Promise<void> {
    const invoiceId = invoice.id;
    if (period.end.getTime() <= this.clock.now().getTime()) return; // a cycle already over grants nothing
    // The plan at delivery would decide by what happened since: an admin's move to Enterprise after
    // the payment would take the paid cycle away, or its overrides changed since would change it.
    const paidAt = invoice.paidAt ?? this.clock.now();
    const account = await planTermsAt(em, this.audit, accountId, new Date(paidAt.getTime() + 1000));
    const then = account && this.catalog.has(account.plan) ? this.catalog.plan(account.plan) : undefined;
    if (then?.adminOnly) return;
    const own = then?.allowanceTrigger === 'paid_invoice';
    const planId = own ? then.id : this.catalog.planOfPrices(invoice.lines.map((l) => l.priceId))?.id;
    if (planId === undefined) return;
    // On the account's plan, its terms; on the plan of the prices (the account has left it), the terms
    // the subscription ended with, if any (never another plan's overrides).
    const plan = this.catalog.effective(planId, own && !ended ? account?.overrides : (ended?.overrides ?? null));
    const amount = plan.includedCreditsMicros;
    if (amount <= 0n) return;
    const grantId = cycleGrantId(accountId, period);
    // Once per cycle: the grant id is deterministic per account and cycle, checked under the wallet lock
    // (with a cycle granted under the older, shared id: the one with an invoice as reference).
    await this.ledger.lockWalletRow(em, accountId);
    if (await this.cycleGrant(em, accountId, period)) return;
    // Dated when the invoice was paid (never later than now), as a top-up: the month of the payment,
    // not of the webhook's delivery.
    const at = new Date(Math.min(paidAt.getTime(), this.clock.now().getTime()));
    const allowance = await this.ledger.grant(
      em,
      {
        accountId,
        source: 'plan_allowance',
        amount,
        expiresAt: period.end,
        grantId,
        idempotencyKey: cycleAllowanceKey(period),
        reason: allowanceReason(plan.name, period),
        reference: invoiceId,
        actor: ACTOR,
      },
      at,
    );
    // Its own cause, the grant (the period-start allowance of a month starting at the same instant has
    // the account and period: both are told).
    const periodJson = { from: period.start.toISOString(), to: period.end.toISOString() };
    await this.notifyGranted(em, accountId, `credits.granted:${grantId}`, allowance.grant, {
      period: periodJson,
      invoiceId,
    });
  }

  /**
   * Takes back what is left (unheld) of the allowances of the subscription's invoices paid after it
   * ended, or in its last second (`invoice.paid` delivered before the cancellation), once per invoice, with a
   * `credits.clawed_back` notice.
   */
  async takeBackPaidAfterEnd(em: EntityManager, accountId: string, subscriptionId: string): Promise<void> {
    const late = await rows<{ invoice_id: string; period_start: Date; period_end: Date; paid_at: Date; ended_at: Date }>(
      em,
      `SELECT i.invoice_id, i.period_start, i.period_end, i.paid_at, s.ended_at FROM stripe_invoices i
       JOIN stripe_subscriptions s ON s.account_id = i.account_id AND s.subscription_id = i.subscription_id
       WHERE i.account_id = $1 AND i.subscription_id = $2 AND i.status = 'paid' AND i.paid_at >= s.ended_at
       ORDER BY i.invoice_id`,
      [accountId, subscriptionId],
    );
    for (const invoice of late) {
      // Only the allowance this invoice brought (a cycle granted by an earlier invoice keeps its credits).
      const grantId = await this.cycleGrant(em, accountId, { start: invoice.period_start, end: invoice.period_end }, invoice.invoice_id);
      if (!grantId) continue;
      const taken = await clawBack(em, this.audit, {
        accountId,
        grantId,
        max: BigInt(Number.MAX_SAFE_INTEGER) * 1_000_000n,
        idempotencyKey: `stripe-claw-back:paid-after-end:${invoice.invoice_id}`,
        cause: {
          kind: 'paid_after_end',
          invoiceId: invoice.invoice_id,
          subscriptionId,
          paidAt: invoice.paid_at.toISOString(),
          endedAt: invoice.ended_at.toISOString(),
        },
        reason: `invoice ${invoice.invoice_id} was paid after subscription ${subscriptionId} ended: its cycle's credits are taken back`,
        reference: invoice.invoice_id,
        actor: ACTOR,
        now: this.clock.now(),
      });
      if (taken === 0n) continue;
      const data = {
        grantId,
        credits: formatCredits(taken),
        reason: 'paid_after_end' as const,
        invoiceId: invoice.invoice_id,
        subscriptionId,
      };
      const notice = { type: 'credits.clawed_back' as const, accountId, cause: `credits.clawed_back:${invoice.invoice_id}`, data };
      await notifyOnce(em, topicsOf(this.config).notifications, [notice], this.clock.now());
    }
  }

  /**
   * The id of the cycle's grant if it was made (by `invoiceId` when given): under its own id, or under
   * the id it shared with the period-start allowance before 2026-12-06, told apart by its reference
   * (the invoice; the plans module's grants have none).
   */
  private async cycleGrant(em: EntityManager, accountId: string, period: Period, invoiceId?: string): Promise<string | null> {
    const [found] = await rows<{ id: string }>(
      em,
      `SELECT id FROM grants WHERE (id = $1 OR (id = $2 AND reference IS NOT NULL)) AND ($3::text IS NULL OR reference = $3)
       ORDER BY id = $1 DESC LIMIT 1`,
      [cycleGrantId(accountId, period), allowanceGrantId(accountId, period), invoiceId ?? null],
    );
    return found?.id ?? null;
  }

  /** `credits.granted` for a grant made here (a cycle's allowance or a top-up), once per cause. */
  async notifyGranted(
    em: EntityManager,
    accountId: string,
    cause: string,
    grant: GrantView,
    extra: Record<string, unknown>,
  ): Promise<void> {
    const data = {
      grantId: grant.id,
      source: grant.source,
      credits: formatCredits(grant.amount),
      expiresAt: grant.expiresAt?.toISOString() ?? null,
      ...extra,
    };
    await notifyOnce(em, topicsOf(this.config).notifications, [{ type: 'credits.granted', accountId, cause, data }], grant.createdAt);
  }
}
