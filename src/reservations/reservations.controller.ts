import { Body, Controller, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Access, CurrentPrincipal } from 'src/common/auth/auth.decorators';
import { mayActOn, type Principal } from 'src/common/auth/scopes';
import { BillingException } from 'src/common/errors/billing.exception';
import { Doc } from 'src/common/http/openapi';
import { findingsOf } from 'src/common/http/zod-validation.pipe';
import { parsePricedRequest } from 'src/pricing/pricing';
import { RateCard } from 'src/pricing/rate-card';
import {
  extendHeadersSchema,
  extendSchema,
  reservationDetailsSchema,
  reservationSchema,
  reservationViewSchema,
} from './dto/reservation.dto';
import { ReservationDetails, type ReservationDetailsView } from './reservation-details.service';
import { ReservationsService, type ReservationView } from './reservations.service';

@Controller('v1/reservations')
export class ReservationsController {
  constructor(
    private readonly reservations: ReservationsService,
    private readonly details: ReservationDetails,
    private readonly rateCard: RateCard,
  ) {}

  @Post()
  @Access('control-plane')
  @Doc({
    id: 'createReservation',
    summary: 'Authorize a launch and deduct its time reservation up front',
    description:
      'Checks, in order: request valid, account exists and is active, plan allows it, runs quota, agents quota, concurrency, spend limit, credits. ' +
      'Idempotent on `runtimeId`: the same body again returns the same reservation (200); a different body is a 409 whose findings name each field that differs ' +
      '(`minutes`: "reserved with 30, sent 45"; a field absent on one side is said to be absent).',
    tag: 'Reservations',
    body: reservationSchema,
    responses: {
      201: { description: 'Reserved', schema: reservationViewSchema },
      200: { description: 'The same request again: the same reservation', schema: reservationViewSchema },
    },
    errors: [
      'DL_BILLING_NOT_FOUND',
      'DL_BILLING_ACCOUNT_SUSPENDED',
      'DL_BILLING_PLAN_FORBIDS',
      'DL_BILLING_QUOTA_EXCEEDED',
      'DL_BILLING_SPEND_LIMIT_REACHED',
      'DL_BILLING_INSUFFICIENT_CREDITS',
      'DL_BILLING_IDEMPOTENCY_CONFLICT',
      'DL_BILLING_CAPABILITY_UNSUPPORTED',
      'DL_BILLING_UNAVAILABLE',
    ],
  })
  async reserve(
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ReservationView> {
    const request = parsePricedRequest(reservationSchema, body ?? {}, this.rateCard.current());
    const raw = reply.request.raw;
    const { created, view } = await this.reservations.reserve(request, {
      abandoned: () => raw.socket?.destroyed === true,
      actor: `key:${principal.keyId}`,
    });
    void reply.status(created ? 201 : 200);
    return view;
  }

  @Post(':runtimeId/extend')
  @HttpCode(200)
  @Access('control-plane')
  @Doc({
    id: 'extendReservation',
    summary: 'Add minutes to a reservation',
    description:
      'The `Idempotency-Key` header is required: the same key again adds nothing and returns the reservation as it is now (the same minutes and amount reserved; its status and expiresAt as they are by then); a different request under it is a 409 with a finding on `minutes` (the minutes the key extended by, and those sent).',
    tag: 'Reservations',
    body: extendSchema,
    headers: extendHeadersSchema,
    responses: { 200: { description: 'Extended', schema: reservationViewSchema } },
    errors: [
      'DL_BILLING_NOT_FOUND',
      'DL_BILLING_ACCOUNT_SUSPENDED',
      'DL_BILLING_SPEND_LIMIT_REACHED',
      'DL_BILLING_INSUFFICIENT_CREDITS',
      'DL_BILLING_IDEMPOTENCY_CONFLICT',
    ],
  })
  async extend(
    @Param('runtimeId') runtimeId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ReservationView> {
    // Every finding at once: the body's and the header's.
    const parsed = extendSchema.safeParse(body ?? {});
    const findings = parsed.success ? [] : findingsOf(parsed.error);
    if (!idempotencyKey || idempotencyKey.length > 200) {
      findings.push({ field: 'Idempotency-Key', message: 'header is required (1-200 characters)' });
    }
    if (!parsed.success || !idempotencyKey || findings.length > 0) throw BillingException.invalid(findings);
    return this.reservations.extend(runtimeId, parsed.data.minutes, idempotencyKey, `key:${principal.keyId}`);
  }

  @Get(':runtimeId')
  @Access('authenticated')
  @Doc({
    id: 'getReservation',
    summary: 'A reservation: status, running time, charge, release, intervals and the commands sent',
    tag: 'Reservations',
    responses: { 200: { description: 'The reservation, every charge explained', schema: reservationDetailsSchema } },
    errors: ['DL_BILLING_NOT_FOUND'],
  })
  async get(@Param('runtimeId') runtimeId: string, @CurrentPrincipal() principal: Principal): Promise<ReservationDetailsView> {
    const view = await this.details.get(runtimeId);
    // Another account's runtime is as invisible as a missing one: the same 404, so a key cannot tell
    // whether someone else's runtime id exists.
    if (!view || !mayActOn(principal, view.accountId, ['control-plane', 'reports'])) {
      throw BillingException.notFound(`Reservation of runtime ${runtimeId}`);
    }
    return view;
  }
}
