import { Body, Controller, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Access, CurrentPrincipal } from '../accounts/auth/auth.decorators';
import { mayActOn, type Principal } from '../accounts/auth/scopes';
import { BillingException } from '../common/errors/billing.exception';
import { Doc } from '../common/http/openapi';
import { parseOrThrow } from '../common/http/zod-validation.pipe';
import { parsePricedRequest } from '../pricing/pricing';
import { RateCard } from '../pricing/rate-card';
import { extendSchema, reservationSchema } from './dto/reservation.dto';
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
  @Doc('Authorize a launch and deduct its time reservation up front (idempotent on runtimeId)', reservationSchema)
  async reserve(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply, @CurrentPrincipal() principal: Principal): Promise<ReservationView> {
    const request = parsePricedRequest(reservationSchema, body ?? {}, this.rateCard.current());
    const raw = reply.request.raw;
    const { created, view } = await this.reservations.reserve(request, { abandoned: () => raw.socket?.destroyed === true, actor: `key:${principal.keyId}` });
    void reply.status(created ? 201 : 200);
    return view;
  }

  @Post(':runtimeId/extend')
  @HttpCode(200)
  @Access('control-plane')
  @Doc('Add minutes to a reservation (Idempotency-Key header required)', extendSchema)
  async extend(
    @Param('runtimeId') runtimeId: string,
    @Body() body: unknown,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @CurrentPrincipal() principal: Principal,
  ): Promise<ReservationView> {
    const request = parseOrThrow(extendSchema, body ?? {});
    if (!idempotencyKey || idempotencyKey.length > 200) {
      throw BillingException.invalid([{ field: 'Idempotency-Key', message: 'header is required (1-200 characters)' }]);
    }
    return this.reservations.extend(runtimeId, request.minutes, idempotencyKey, `key:${principal.keyId}`);
  }

  @Get(':runtimeId')
  @Access('authenticated')
  @Doc('A reservation: status, running time, charge, release, intervals and the commands sent')
  async get(@Param('runtimeId') runtimeId: string, @CurrentPrincipal() principal: Principal): Promise<ReservationDetailsView> {
    const view = await this.details.get(runtimeId);
    // Another account's runtime is as invisible as a missing one: the same 404, so a key cannot tell
    // whether someone else's runtime id exists.
    if (!view || !mayActOn(principal, view.accountId, ['control-plane', 'reports'])) throw BillingException.notFound(`Reservation of runtime ${runtimeId}`);
    return view;
  }
}
