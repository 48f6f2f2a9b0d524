import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { formatCredits } from 'src/common/money';
import { PlanCatalog, type PlanId } from 'src/plan-catalog/plan-catalog';
import { StripeGateway } from './stripe-gateway';

@Injectable()
export class TopUpsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly gateway: StripeGateway,
    private readonly catalog: PlanCatalog,
  ) {}

  /**
   * A Checkout Session for a pack: `client_reference_id` = account id, metadata {accountId, pack,
   * credits}, so the completion webhook knows what to credit without any state kept here.
   */
  async start(accountId: string, packId: string, idempotencyKey: string): Promise<{ checkoutUrl: string; sessionId: string }> {
    const pack = this.catalog.topUpPack(packId);
    if (!pack) {
      const known = this.catalog
        .topUpPacks()
        .map((p) => p.id)
        .join(', ');
      throw BillingException.invalid([{ field: 'pack', message: `must be one of ${known}` }]);
    }
    const [account] = await rows<{ plan: PlanId; plan_overrides: Record<string, unknown> | null; customer_id: string | null }>(
      this.ds,
      `SELECT a.plan, a.plan_overrides, s.customer_id FROM accounts a LEFT JOIN stripe_subscriptions s ON s.account_id = a.id WHERE a.id = $1`,
      [accountId],
    );
    if (!account) throw BillingException.notFound(`Account ${accountId}`);
    if (!this.catalog.effective(account.plan, account.plan_overrides).topUps) {
      throw new BillingException('DL_BILLING_PLAN_FORBIDS', "The account's plan does not allow top-ups", [
        { field: 'pack', message: 'top-ups are not in the plan' },
      ]);
    }
    const session = await this.gateway.createCheckoutSession(
      { accountId, pack: pack.id, credits: formatCredits(pack.creditsMicros), priceId: pack.priceId, customerId: account.customer_id },
      idempotencyKey,
    );
    if (!session.url) throw new Error(`Stripe returned checkout session ${session.id} without a url`);
    return { checkoutUrl: session.url, sessionId: session.id };
  }
}
