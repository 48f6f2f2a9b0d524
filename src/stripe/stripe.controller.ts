import { randomUUID } from 'node:crypto';
import { Body, Controller, Get, Headers, HttpCode, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { Access, CurrentPrincipal, Public } from '../accounts/auth/auth.decorators';
import { FailureLimiter } from '../accounts/auth/failure-limiter';
import type { Principal } from '../accounts/auth/scopes';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { BillingException } from '../common/errors/billing.exception';
import { Doc } from '../common/http/openapi';
import { ZodPipe } from '../common/http/zod-validation.pipe';
import { Metrics } from '../health/metrics';
import { JobsService, type JobResult } from '../jobs/jobs.service';
import { SeatsService } from './seats.service';
import { StripeEventsService, type EventOutcome } from './stripe-events.service';
import { StripeGateway, type StripeEventLike } from './stripe-gateway';
import { SubscriptionsService } from './subscriptions.service';
import { TopUpsService } from './top-ups.service';

const topUpSchema = z.strictObject({ pack: z.string().min(1).max(64) });
type TopUpDto = z.infer<typeof topUpSchema>;

@Controller()
export class StripeController {
  /** Bad webhook signatures per client address (STRIPE_WEBHOOK_FAILURES_PER_MINUTE). */
  private readonly webhookFailures: FailureLimiter;

  constructor(
    private readonly gateway: StripeGateway,
    private readonly events: StripeEventsService,
    private readonly topUps: TopUpsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly seats: SeatsService,
    private readonly jobs: JobsService,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.webhookFailures = new FailureLimiter(config.stripe.webhookFailuresPerMinute);
  }

  /**
   * Stripe webhooks: the signature is checked on the raw body before anything is read. Bad
   * signatures count against the client address; past the limit they get 429 instead of 400. A
   * correctly signed event is applied even from a limited address: checking it costs one HMAC, and
   * refusing it would let anyone sharing Stripe's path (a proxy, a NAT) block real events.
   */
  @Post('v1/stripe/webhooks')
  @Public()
  @HttpCode(200)
  @Doc('Stripe webhook endpoint (Stripe-Signature checked on the raw body; 429 after too many bad signatures from one client)')
  async webhook(@Req() req: FastifyRequest & { rawBody?: Buffer }, @Headers('stripe-signature') signature: string | undefined): Promise<EventOutcome & { received: true }> {
    let event: StripeEventLike;
    try {
      event = this.verifyLimited(req.ip, req.rawBody, signature);
    } catch (error) {
      this.metrics.stripeWebhook(null, 'signature_invalid');
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

  private verifyLimited(client: string | undefined, rawBody: Buffer | undefined, signature: string | undefined): StripeEventLike {
    try {
      return this.gateway.verifyWebhook(rawBody, signature);
    } catch (error) {
      if (!(error instanceof BillingException) || error.code !== 'DL_BILLING_STRIPE_SIGNATURE_INVALID') throw error;
      const address = client ?? 'unknown';
      const wait = this.webhookFailures.retryAfter(address);
      if (wait > 0) {
        throw new BillingException('DL_BILLING_RATE_LIMITED', 'Too many webhook requests with a bad signature: try again later', [], { retryAfterSeconds: wait });
      }
      this.webhookFailures.fail(address);
      throw error;
    }
  }

  /** Starts a top-up: a Stripe Checkout Session for the pack; the credits come with its completion webhook. */
  @Post('v1/accounts/:id/top-ups')
  @HttpCode(201)
  @Access({ accountParam: 'id' })
  @Doc('Start a top-up {pack} → {checkoutUrl} (Stripe Checkout)', topUpSchema)
  topUp(
    @Param('id') accountId: string,
    @Body(new ZodPipe(topUpSchema)) body: TopUpDto,
    @Headers('idempotency-key') key: string | undefined,
  ): Promise<{ checkoutUrl: string; sessionId: string }> {
    return this.topUps.start(accountId, body.pack, key ? `top-up:${accountId}:${key}` : `top-up:${accountId}:${randomUUID()}`);
  }

  @Get('v1/accounts/:id/subscription')
  @Access('control-plane', 'reports', { accountParam: 'id' })
  @Doc('The account\'s plan, seats and Stripe subscription')
  subscription(@Param('id') accountId: string): Promise<Record<string, unknown>> {
    return this.subscriptions.view(accountId);
  }

  /** Creates the account's Team subscription in Stripe (base + seats) and moves it to Team. */
  @Post('v1/admin/accounts/:id/subscription')
  @HttpCode(201)
  @Access('admin')
  @Doc('Create the account\'s Team subscription in Stripe (admin)')
  async subscribe(@Param('id') accountId: string, @CurrentPrincipal() p: Principal, @Res({ passthrough: true }) reply: FastifyReply): Promise<Record<string, unknown>> {
    const { created, view } = await this.subscriptions.create(accountId, `key:${p.keyId}`);
    void reply.status(created ? 201 : 200);
    return view;
  }

  @Post('v1/admin/reconciliation/run')
  @HttpCode(200)
  @Access('admin')
  @Doc('Run seat reconciliation now (same lock as the seat-reconciliation job)')
  reconcile(): Promise<JobResult> {
    return this.jobs.run('seat-reconciliation');
  }

  @Get('v1/admin/reconciliation/discrepancies')
  @Access('admin', 'reports')
  @Doc('Seat discrepancies found: quantity drift corrected by reconciliation, invoices billed for other seats')
  async discrepancies(@Query('accountId') accountId: string | undefined): Promise<{ items: Record<string, unknown>[] }> {
    return { items: await this.seats.discrepancies(accountId || undefined) };
  }
}
