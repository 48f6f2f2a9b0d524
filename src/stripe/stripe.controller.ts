import { randomUUID } from 'node:crypto';
import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { Access, CurrentPrincipal, Public } from 'src/common/auth/auth.decorators';
import { FailureLimiter } from 'src/accounts/auth/failure-limiter';
import { FailureStore } from 'src/accounts/auth/failure-store';
import type { Principal } from 'src/common/auth/scopes';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { BillingException } from 'src/common/errors/billing.exception';
import type { LimitedBodyRequest } from 'src/common/http/json-body';
import { Doc } from 'src/common/http/openapi';
import { parseOrThrow, ZodPipe, ZodQueryPipe } from 'src/common/http/zod-validation.pipe';
import { idempotencyKeySchema } from 'src/ledger/dto/grant.dto';
import { jobResultSchema, JobsService, type JobResult } from 'src/jobs/jobs.service';
import {
  checkoutSchema,
  discrepanciesQuerySchema,
  stripeEventSchema,
  discrepanciesSchema,
  subscriptionViewSchema,
  topUpHeadersSchema,
  topUpSchema,
  webhookResultSchema,
  type TopUpDto,
} from './dto/stripe.dto';
import { Metrics } from 'src/health/metrics';
import { SeatsService } from './seats.service';
import { StripeEventsService, type EventOutcome } from './stripe-events.service';
import { StripeGateway, type StripeEventLike } from './stripe-gateway';
import { SubscriptionsService } from './subscriptions.service';
import { TopUpsService } from './top-ups.service';

@Controller()
export class StripeController {
  /** Bad webhook signatures per client, shared by the instances (STRIPE_WEBHOOK_FAILURES_PER_MINUTE). */
  private readonly webhookFailures: FailureLimiter;

  constructor(
    private readonly gateway: StripeGateway,
    private readonly events: StripeEventsService,
    private readonly topUps: TopUpsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly seats: SeatsService,
    private readonly jobs: JobsService,
    failureStore: FailureStore,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.webhookFailures = new FailureLimiter('stripe-webhook', config.stripe.webhookFailuresPerMinute, failureStore);
  }

  /**
   * Stripe webhooks: the signature is checked on the raw body before anything is read (the body
   * parser leaves this route's body unparsed, see common/http/json-body). Bad
   * signatures count against the client address; past the limit they get 429 instead of 400. A
   * correctly signed event is applied even from a limited address: checking it costs one HMAC, and
   * refusing it would let anyone sharing Stripe's path (a proxy, a NAT) block real events.
   */
  @Post('v1/stripe/webhooks')
  @Public()
  @HttpCode(200)
  @Doc({
    id: 'stripeWebhook',
    summary: 'Stripe webhook endpoint',
    description:
      'The `Stripe-Signature` header is checked on the raw body; too many bad signatures from one client get 429. Each event is applied once (on `event.id`).',
    tag: 'Stripe',
    headers: z.object({ 'stripe-signature': z.string() }),
    body: stripeEventSchema,
    responses: { 200: { description: 'Received', schema: webhookResultSchema } },
    errors: ['DL_BILLING_REQUEST_INVALID', 'DL_BILLING_STRIPE_SIGNATURE_INVALID', 'DL_BILLING_RATE_LIMITED', 'DL_BILLING_UNAVAILABLE'],
  })
  async webhook(
    @Req() req: FastifyRequest & LimitedBodyRequest,
    @Headers('stripe-signature') signature: string | undefined,
  ): Promise<EventOutcome & { received: true }> {
    let event: StripeEventLike;
    try {
      event = await this.verifyLimited(req.ip, req.rawBody, signature);
    } catch (error) {
      this.metrics.stripeWebhook(null, 'signature_invalid');
      throw error;
    }
    // Signed by Stripe, and still refused when it breaks the JSON limits (its handling recurses).
    if (req.bodyLimitProblem !== undefined) {
      this.metrics.stripeWebhook(null, 'refused');
      throw BillingException.invalid([{ field: 'body', message: req.bodyLimitProblem }], 'The request body is refused');
    }
    try {
      parseOrThrow(stripeEventSchema, event);
    } catch (error) {
      this.metrics.stripeWebhook(null, 'refused');
      throw error;
    }
    try {
      const outcome = await this.events.handle(event);
      this.metrics.stripeWebhook(event.type, outcome.duplicate ? 'duplicate' : outcome.ignored ? 'ignored' : 'processed');
      return { received: true, ...outcome };
    } catch (error) {
      this.metrics.stripeWebhook(event.type, 'failed');
      throw error;
    }
  }

  private async verifyLimited(
    client: string | undefined,
    rawBody: Buffer | undefined,
    signature: string | undefined,
  ): Promise<StripeEventLike> {
    try {
      return this.gateway.verifyWebhook(rawBody, signature);
    } catch (error) {
      if (!(error instanceof BillingException) || error.code !== 'DL_BILLING_STRIPE_SIGNATURE_INVALID') throw error;
      const wait = await this.webhookFailures.retryAfter(client);
      if (wait > 0) {
        throw new BillingException('DL_BILLING_RATE_LIMITED', 'Too many webhook requests with a bad signature: try again later', [], {
          retryAfterSeconds: wait,
        });
      }
      await this.webhookFailures.fail(client);
      throw error;
    }
  }

  /** Starts a top-up: a Stripe Checkout Session for the pack; the credits come with its completion webhook. */
  @Post('v1/accounts/:id/top-ups')
  @HttpCode(201)
  @Access({ accountParam: 'id' })
  @Doc({
    id: 'startTopUp',
    summary: 'Start a top-up: a Stripe Checkout Session for the pack',
    tag: 'Stripe',
    body: topUpSchema,
    headers: topUpHeadersSchema,
    responses: { 201: { description: 'Checkout started', schema: checkoutSchema } },
    errors: ['DL_BILLING_NOT_FOUND', 'DL_BILLING_PLAN_FORBIDS', 'DL_BILLING_IDEMPOTENCY_CONFLICT', 'DL_BILLING_UNAVAILABLE'],
  })
  topUp(
    @Param('id') accountId: string,
    @Body(new ZodPipe(topUpSchema)) body: TopUpDto,
    @Headers('idempotency-key') key: string | undefined,
  ): Promise<{ checkoutUrl: string; sessionId: string }> {
    const idempotencyKey = parseOrThrow(idempotencyKeySchema, key, 'Idempotency-Key') ?? randomUUID();
    return this.topUps.start(accountId, body.pack, `top-up:${accountId}:${idempotencyKey}`);
  }

  @Get('v1/accounts/:id/subscription')
  @Access('control-plane', 'reports', { accountParam: 'id' })
  @Doc({
    id: 'getSubscription',
    summary: "The account's plan, seats and Stripe subscription",
    tag: 'Stripe',
    responses: { 200: { description: 'The subscription', schema: subscriptionViewSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  subscription(@Param('id') accountId: string): Promise<Record<string, unknown>> {
    return this.subscriptions.view(accountId);
  }

  /** Creates the account's Team subscription in Stripe (base + seats) and moves it to Team. */
  @Post('v1/admin/accounts/:id/subscription')
  @HttpCode(201)
  @Access('admin')
  @Doc({
    id: 'createSubscription',
    summary: "Create the account's Team subscription in Stripe (base fee and seats) and move it to Team",
    tag: 'Stripe',
    responses: {
      201: { description: 'Created', schema: subscriptionViewSchema },
      200: { description: 'It already had a live one', schema: subscriptionViewSchema },
    },
    errors: ['DL_BILLING_NOT_FOUND', 'DL_BILLING_UNAVAILABLE'],
  })
  async subscribe(
    @Param('id') accountId: string,
    @CurrentPrincipal() p: Principal,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<Record<string, unknown>> {
    const { created, view } = await this.subscriptions.create(accountId, `key:${p.keyId}`);
    void reply.status(created ? 201 : 200);
    return view;
  }

  @Post('v1/admin/reconciliation/run')
  @HttpCode(200)
  @Access('admin')
  @Doc({
    id: 'runReconciliation',
    summary: 'Run seat reconciliation now (same lock as the seat-reconciliation job)',
    tag: 'Stripe',
    responses: { 200: { description: 'Ran, or skipped because another instance holds its lock', schema: jobResultSchema } },
    errors: ['DL_BILLING_UNAVAILABLE'],
  })
  reconcile(): Promise<JobResult> {
    return this.jobs.run('seat-reconciliation');
  }

  @Get('v1/admin/reconciliation/discrepancies')
  @Access('admin', 'reports')
  @Doc({
    id: 'listSeatDiscrepancies',
    summary: 'Seat discrepancies found: quantity drift corrected by reconciliation, invoices billed for other seats',
    tag: 'Stripe',
    query: discrepanciesQuerySchema,
    responses: { 200: { description: 'The latest 1000', schema: discrepanciesSchema } },
  })
  async discrepancies(
    @Query(new ZodQueryPipe(discrepanciesQuerySchema)) q: z.output<typeof discrepanciesQuerySchema>,
  ): Promise<{ items: Record<string, unknown>[] }> {
    return { items: await this.seats.discrepancies(q.accountId) };
  }
}
