import { createHash } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import Stripe from 'stripe';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { BillingException } from 'src/common/errors/billing.exception';
import { Metrics } from 'src/health/metrics';
import { readCheckoutSession, readSubscription, type CheckoutSessionSnapshot, type SubscriptionSnapshot } from './stripe-objects';

export interface CreateSubscriptionInput {
  customerId: string;
  accountId: string;
  basePriceId: string;
  seatPriceId: string;
  seats: number;
}

export interface CreateCheckoutInput {
  accountId: string;
  pack: string;
  credits: string;
  priceId: string;
  customerId: string | null;
}

/** A Stripe event as this service reads it. */
export interface StripeEventLike {
  id: string;
  type: string;
  created: number;
  data: { object: unknown };
}

/**
 * The one door to Stripe: the official SDK, pointed at `STRIPE_API_URL` when set (a local fake in
 * tests), with a timeout and network retries. Every write passes an idempotency key, so a call that
 * timed out after Stripe acted is retried (by the SDK, or by us later) without acting twice.
 */
@Injectable()
export class StripeGateway {
  private readonly logger = new Logger('Stripe');
  private readonly client: Stripe | null;
  private readonly webhookSecret: string | null;
  readonly prorationBehavior: AppConfig['stripe']['prorationBehavior'];
  /** The longest one call may take: every attempt's timeout and the SDK's pauses between them (5 s at most each). */
  readonly longestCallMs: number;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    const s = config.stripe;
    this.prorationBehavior = s.prorationBehavior;
    this.longestCallMs = (s.maxNetworkRetries + 1) * s.timeoutMs + s.maxNetworkRetries * 5_000;
    this.webhookSecret = s.webhookSecret ?? null;
    if (!s.secretKey) {
      this.client = null;
      return;
    }
    const url = s.apiUrl ? new URL(s.apiUrl) : null;
    this.client = new Stripe(s.secretKey, {
      timeout: s.timeoutMs,
      maxNetworkRetries: s.maxNetworkRetries,
      telemetry: false,
      ...(url
        ? {
            host: url.hostname,
            port: url.port || (url.protocol === 'http:' ? 80 : 443),
            protocol: url.protocol === 'http:' ? 'http' : 'https',
          }
        : {}),
    });
  }

  /** A call to Stripe, counted, with Stripe's errors turned into the contract's (see stripeFailure). */
  private async call<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      return await this.metrics.stripeCall(operation, work);
    } catch (error) {
      const failure = stripeFailure(error);
      if (failure instanceof BillingException) {
        this.logger.warn(`Stripe ${operation}: ${error instanceof Error ? error.message : String(error)}`);
      }
      throw failure;
    }
  }

  get enabled(): boolean {
    return this.client !== null;
  }

  private stripe(): Stripe {
    if (!this.client) throw new BillingException('DL_BILLING_UNAVAILABLE', 'Stripe is not configured (STRIPE_SECRET_KEY)');
    return this.client;
  }

  async createCustomer(accountId: string, name: string | null, idempotencyKey: string): Promise<string> {
    const customer = await this.call('customers.create', () =>
      this.stripe().customers.create(
        { ...(name ? { name } : {}), metadata: { accountId } },
        { idempotencyKey: stripeIdempotencyKey(idempotencyKey) },
      ),
    );
    return customer.id;
  }

  async createSubscription(input: CreateSubscriptionInput, idempotencyKey: string): Promise<SubscriptionSnapshot> {
    const created = await this.call('subscriptions.create', () =>
      this.stripe().subscriptions.create(
        {
          customer: input.customerId,
          items: [
            { price: input.basePriceId, quantity: 1 },
            { price: input.seatPriceId, quantity: input.seats },
          ],
          proration_behavior: this.prorationBehavior,
          metadata: { accountId: input.accountId },
        },
        { idempotencyKey: stripeIdempotencyKey(idempotencyKey) },
      ),
    );
    return parsed(readSubscription(created), 'subscription');
  }

  async retrieveSubscription(subscriptionId: string): Promise<SubscriptionSnapshot> {
    return parsed(
      readSubscription(await this.call('subscriptions.retrieve', () => this.stripe().subscriptions.retrieve(subscriptionId))),
      'subscription',
    );
  }

  /**
   * Sets the seat item's quantity to an absolute count, prorated from `prorationDate` (Stripe's
   * `proration_date`, whole seconds; not sent when prorations are off).
   */
  async setItemQuantity(itemId: string, quantity: number, idempotencyKey: string, prorationDate: Date): Promise<number> {
    const prorating = this.prorationBehavior !== 'none';
    const item = await this.call('subscription_items.update', () =>
      this.stripe().subscriptionItems.update(
        itemId,
        {
          quantity,
          proration_behavior: this.prorationBehavior,
          ...(prorating ? { proration_date: Math.floor(prorationDate.getTime() / 1000) } : {}),
        },
        { idempotencyKey: stripeIdempotencyKey(idempotencyKey) },
      ),
    );
    return item.quantity ?? 0;
  }

  async createCheckoutSession(
    input: CreateCheckoutInput,
    idempotencyKey: string,
  ): Promise<CheckoutSessionSnapshot & { url: string | null }> {
    const session = await this.call('checkout.sessions.create', () =>
      this.stripe().checkout.sessions.create(
        {
          mode: 'payment',
          line_items: [{ price: input.priceId, quantity: 1 }],
          client_reference_id: input.accountId,
          metadata: { accountId: input.accountId, pack: input.pack, credits: input.credits },
          payment_intent_data: { metadata: { accountId: input.accountId, pack: input.pack, credits: input.credits } },
          success_url: this.config.stripe.checkoutSuccessUrl,
          cancel_url: this.config.stripe.checkoutCancelUrl,
          ...(input.customerId ? { customer: input.customerId } : {}),
        },
        { idempotencyKey: stripeIdempotencyKey(idempotencyKey) },
      ),
    );
    return { ...parsed(readCheckoutSession(session), 'checkout session'), url: session.url ?? null };
  }

  /** Events created at or after `since`, oldest first. */
  async eventsSince(since: Date, max = 10_000): Promise<StripeEventLike[]> {
    const out = await this.call('events.list', async () => {
      const listed: StripeEventLike[] = [];
      for await (const event of this.stripe().events.list({ created: { gte: Math.floor(since.getTime() / 1000) }, limit: 100 })) {
        listed.push(event as unknown as StripeEventLike);
        if (listed.length >= max) break;
      }
      return listed;
    });
    // Stripe lists newest first: reversed, then a stable sort by second keeps Stripe's own order within
    // a second (event ids are not ordered; sorting by them applied two seat changes of one second backwards).
    return out.reverse().sort((a, b) => a.created - b.created);
  }

  /**
   * Verifies a webhook's signature on its raw body (Stripe's default tolerance: 300 s) and parses it;
   * DL_BILLING_STRIPE_SIGNATURE_INVALID for a bad or stale signature or a body changed after signing.
   */
  verifyWebhook(rawBody: Buffer | undefined, signature: string | undefined): StripeEventLike {
    if (!this.webhookSecret) {
      throw new BillingException('DL_BILLING_UNAVAILABLE', 'Stripe webhooks are not configured (STRIPE_WEBHOOK_SECRET)');
    }
    if (!rawBody || !signature) {
      const message = !signature ? 'is required' : 'needs a body to verify';
      throw new BillingException('DL_BILLING_STRIPE_SIGNATURE_INVALID', 'The Stripe-Signature header and a body are required', [
        { field: 'stripe-signature', message },
      ]);
    }
    try {
      return Stripe.webhooks.constructEvent(rawBody, signature, this.webhookSecret) as unknown as StripeEventLike;
    } catch (error) {
      const reason = error instanceof Error ? (error.message.split('\n')[0] ?? 'invalid') : 'invalid';
      throw new BillingException('DL_BILLING_STRIPE_SIGNATURE_INVALID', `The Stripe signature does not verify: ${reason}`, [
        { field: 'stripe-signature', message: `does not verify: ${reason}` },
      ]);
    }
  }
}

/** Stripe keeps idempotency keys of up to 255 characters: a longer one is sent as its SHA-256. */
export function stripeIdempotencyKey(key: string): string {
  return key.length <= 255 ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * Stripe's errors as the caller should see them: a key reused for another request is the caller's
 * 409; Stripe unreachable, failing or rate limiting is a 503 to retry; any other refusal is this
 * service's fault, a 500 whose Stripe message (ids, parameters) goes to the log and not to the caller.
 */
export function stripeFailure(error: unknown): unknown {
  if (error instanceof Stripe.errors.StripeIdempotencyError) {
    return new BillingException('DL_BILLING_IDEMPOTENCY_CONFLICT', 'This Idempotency-Key was used for a different request');
  }
  if (
    error instanceof Stripe.errors.StripeConnectionError ||
    error instanceof Stripe.errors.StripeAPIError ||
    error instanceof Stripe.errors.StripeRateLimitError
  ) {
    return new BillingException('DL_BILLING_UNAVAILABLE', 'Stripe cannot be reached now; try again later');
  }
  if (error instanceof Stripe.errors.StripeError) return new Error(`Stripe refused the request: ${error.message}`, { cause: error });
  return error;
}

function parsed<T>(value: T | null, what: string): T {
  if (value === null) throw new Error(`Stripe answered with an unreadable ${what}`);
  return value;
}
