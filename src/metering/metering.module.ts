// Owns: runtimes, runtime_events, event_month_archives, reservation_extensions.
// runtime_events is partitioned by runtime month (event-partitions.job.ts makes them, event-archive.ts detaches them).
// Other modules mark runtimes terminating through runtime-row.ts.
import { Module } from '@nestjs/common';
import { LedgerModule } from 'src/ledger/ledger.module';
import { PlansModule } from 'src/plans/plans.module';
import { PricingModule } from 'src/pricing/pricing.module';
import { ReservationsModule } from 'src/reservations/reservations.module';
import { EventExtensions } from './event-extensions';
import { EventPartitionsJob } from './event-partitions.job';
import { EventsController } from './events.controller';
import { LifecycleConsumer } from './lifecycle-consumer';
import { LifecycleIngestService } from './lifecycle-ingest.service';
import { MeteringService } from './metering.service';
import { UnreservedRuntimes } from './unreserved-runtimes';
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
    EventPartitionsJob,
    LifecycleIngestService,
    LifecycleConsumer,
    MeteringService,
    UnreservedRuntimes,
    RuntimeAdminService,
    SettlementHooks,
    SweeperService,
  ],
  exports: [EventExtensions, SettlementHooks, LifecycleConsumer, LifecycleIngestService, RuntimeAdminService],
})
export class MeteringModule {}
