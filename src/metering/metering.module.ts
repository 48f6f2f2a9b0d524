// Owns: runtimes, runtime_events, reservation_extensions.
// Other modules mark runtimes terminating through runtime-row.ts.
import { Module } from '@nestjs/common';
import { LedgerModule } from 'src/ledger/ledger.module';
import { PlansModule } from 'src/plans/plans.module';
import { PricingModule } from 'src/pricing/pricing.module';
import { ReservationsModule } from 'src/reservations/reservations.module';
import { EventExtensions } from './event-extensions';
import { EventsController } from './events.controller';
import { LifecycleConsumer } from './lifecycle-consumer';
import { LifecycleIngestService } from './lifecycle-ingest.service';
import { MeteringService } from './metering.service';
import { RuntimeAdminService } from './runtime-admin.service';
import { RuntimesController } from './runtimes.controller';
import { SettlementHooks } from './settlement-hooks';
import { SweeperService } from './sweeper.service';
import { UsageController } from './usage.controller';

@Module({
  imports: [LedgerModule, PricingModule, PlansModule, ReservationsModule],
  controllers: [EventsController, RuntimesController, UsageController],
  providers: [
    EventExtensions,
    LifecycleIngestService,
    LifecycleConsumer,
    MeteringService,
    RuntimeAdminService,
    SettlementHooks,
    SweeperService,
  ],
  exports: [EventExtensions, SettlementHooks, LifecycleConsumer, LifecycleIngestService, RuntimeAdminService],
})
export class MeteringModule {}
