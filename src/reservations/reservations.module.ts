import { Module } from '@nestjs/common';
import { LedgerModule } from 'src/ledger/ledger.module';
import { PlansModule } from 'src/plans/plans.module';
import { PricingModule } from 'src/pricing/pricing.module';
import { SpendLimitsModule } from 'src/spend-limits/spend-limits.module';
import { AdmissionReads } from './admission-reads';
import { ReservationBatch } from './reservation-batch';
import { ReservationDetails } from './reservation-details.service';
import { ReservationsController } from './reservations.controller';
import { ReservationsService } from './reservations.service';

/**
 * Admission: `POST /v1/reservations` and its extensions decided by one function over a batch
 * (admission.ts), on what the plans, quotas and spend limits read for it (their typed reads), the
 * credits held by the ledger. Metering keeps what happens after: lifecycle events, sessions, settlement.
 */
@Module({
  imports: [LedgerModule, PricingModule, SpendLimitsModule, PlansModule],
  controllers: [ReservationsController],
  providers: [AdmissionReads, ReservationBatch, ReservationsService, ReservationDetails],
  exports: [ReservationsService],
})
export class ReservationsModule {}
