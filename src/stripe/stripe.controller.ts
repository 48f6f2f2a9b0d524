import { randomUUID } from 'node:crypto';
import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { Access, CurrentPrincipal, Public } from '../accounts/auth/auth.decorators';
import type { Principal } from '../accounts/auth/scopes';
import { Doc } from '../common/http/openapi';
import { ZodPipe } from '../common/http/zod-validation.pipe';
import { JobsService, type JobResult } from '../jobs/jobs.service';
import { SeatsService } from './seats.service';
import { StripeEventsService, type EventOutcome } from './stripe-events.service';
import { StripeGateway } from './stripe-gateway';
import { SubscriptionsService } from './subscriptions.service';
import { TopUpsService } from './top-ups.service';

const topUpSchema = z.strictObject({ pack: z.string().min(1).max(64) });
type TopUpDto = z.infer<typeof topUpSchema>;

@Controller()
export class StripeController {
  constructor(
    private readonly gateway: StripeGateway,
    private readonly events: StripeEventsService,
    private readonly topUps: TopUpsService,
    private readonly subscriptions: SubscriptionsService,
    private readonly seats: SeatsService,
    private readonly jobs: JobsService,
  ) {}

  /** Stripe webhooks: the signature is checked on the raw body before anything is read. */
  @Post('v1/stripe/webhooks')
  @Public()
  @HttpCode(200)
  @Doc('Stripe webhook endpoint (Stripe-Signature checked on the raw body)')
  async webhook(@Req() req: FastifyRequest & { rawBody?: Buffer }, @Headers('stripe-signature') signature: string | undefined): Promise<EventOutcome & { received: true }> {
    const event = this.gateway.verifyWebhook(req.rawBody, signature);
    return { received: true, ...(await this.events.handle(event)) };
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
