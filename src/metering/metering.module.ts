// Owns: runtimes, runtime_events, reservation_extensions.
// Other modules mark runtimes terminating through runtime-row.ts.
import { Module } from '@nestjs/common';
import { LedgerModule } from '../ledger/ledger.module';
import { PlanLaunchGuard } from '../plans/plan-launch-guard';
import { QuotasModule } from '../plans/quotas.module';
import { PricingModule } from '../pricing/pricing.module';
import { SpendLimitsModule } from '../spend-limits/spend-limits.module';
import { EventExtensions } from './event-extensions';
import { EventsController } from './events.controller';
import { LaunchGuard } from './launch-guard';
import { LifecycleConsumer } from './lifecycle-consumer';
import { LifecycleIngestService } from './lifecycle-ingest.service';
import { MeteringService } from './metering.service';
import { ReservationDetails } from './reservation-details.service';
import { ReservationsController } from './reservations.controller';
import { ReservationsService } from './reservations.service';
import { RuntimeAdminService } from './runtime-admin.service';
import { RuntimesController } from './runtimes.controller';
import { SettlementHooks } from './settlement-hooks';
import { SweeperService } from './sweeper.service';
import { UsageController } from './usage.controller';

@Module({
  imports: [LedgerModule, PricingModule, SpendLimitsModule, QuotasModule],
  controllers: [EventsController, ReservationsController, RuntimesController, UsageController],
  providers: [
    EventExtensions,
    LifecycleIngestService,
    LifecycleConsumer,
    MeteringService,
    ReservationsService,
    ReservationDetails,
    RuntimeAdminService,
    SettlementHooks,
    SweeperService,
    // Plans: plan allows it → runs → agents → concurrency → (spend limit hook).
    { provide: LaunchGuard, useExisting: PlanLaunchGuard },
  ],
  exports: [EventExtensions, SettlementHooks, LifecycleConsumer, LifecycleIngestService, ReservationsService, RuntimeAdminService, LaunchGuard],
})
export class MeteringModule {}
