import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { inTransaction, rows } from 'src/common/database/transaction';
import { Clock } from 'src/infra/clock/clock';
import { topicsOf } from 'src/messaging/topics';
import { notifyOnce } from 'src/plans/notifications';
import { SuspensionService } from 'src/spend-limits/suspension.service';

const ACTOR = 'stripe';

/**
 * Non-payment: the past-due notice of a failed invoice, the suspension of an account past due beyond
 * the grace period (`STRIPE_PAST_DUE_GRACE_MS`), and its lifting once the subscription is in good
 * standing again or over. The account's suspension cause is `non_payment`, apart from an admin's.
 */
@Injectable()
export class NonPayment {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly suspension: SuspensionService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * An account suspended for non-payment is relieved of that cause once its subscription is in good
   * standing again, or over (the account is then on Free, which bills nothing), whichever event said
   * so (order-independent: it looks at the resulting state). An admin's suspension stays.
   */
  async lift(em: EntityManager, accountId: string): Promise<void> {
    const [due] = await rows(
      em,
      `SELECT 1 FROM stripe_subscriptions s JOIN accounts a ON a.id = s.account_id
       WHERE s.account_id = $1 AND s.status IN ('active', 'trialing', 'canceled', 'incomplete_expired') AND 'non_payment' = ANY(a.suspended_for)`,
      [accountId],
    );
    if (due) await this.suspension.setWithin(em, accountId, false, 'subscription in good standing again', ACTOR, 'non_payment');
  }

  /** `subscription.past_due` on billing.notifications.v1, once per invoice. */
  async notifyPastDue(em: EntityManager, accountId: string, invoiceId: string, since: Date, now: Date): Promise<void> {
    const suspendsAt = new Date(since.getTime() + this.config.stripe.pastDueGraceMs);
    const data = { invoiceId, pastDueSince: since.toISOString(), suspendsAt: suspendsAt.toISOString() };
    const notice = { type: 'subscription.past_due' as const, accountId, cause: `subscription.past_due:${invoiceId}`, data };
    await notifyOnce(em, topicsOf(this.config).notifications, [notice], now);
  }

  /**
   * Suspends for non-payment the accounts past due for longer than the grace period (SuspensionService
   * terminates their runtimes), also those an admin suspended already: each cause is lifted on its own.
   * An account whose suspension for non-payment an admin waived during this past-due spell is left alone.
   */
  async suspendOverdue(): Promise<string[]> {
    const overdue = (em: Pick<EntityManager, 'query'>, accountId: string | null, lock: boolean) =>
      rows<{ account_id: string }>(
        em,
        `SELECT s.account_id FROM stripe_subscriptions s JOIN accounts a ON a.id = s.account_id
         WHERE s.status IN ('past_due', 'unpaid') AND s.past_due_since <= $1 AND NOT ('non_payment' = ANY(a.suspended_for))
           AND (a.non_payment_waived_at IS NULL OR a.non_payment_waived_at < s.past_due_since)
           AND ($2::text IS NULL OR s.account_id = $2) ORDER BY s.account_id ${lock ? 'FOR UPDATE OF s' : ''}`,
        [new Date(this.clock.now().getTime() - this.config.stripe.pastDueGraceMs), accountId],
      );
    const suspended: string[] = [];
    for (const { account_id: accountId } of await overdue(this.ds, null, false)) {
      // Decided again on the subscription's row, locked as invoice events lock it: a payment that came
      // meanwhile leaves the account alone.
      const done = await inTransaction(this.ds, async (em) => {
        if ((await overdue(em, accountId, true)).length === 0) return false;
        await this.suspension.setWithin(em, accountId, true, 'subscription past due beyond the grace period', ACTOR, 'non_payment');
        return true;
      });
      if (done) suspended.push(accountId);
    }
    return suspended;
  }
}
