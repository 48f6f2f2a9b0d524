import { Inject, Injectable, Module, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { Clock } from '../infra/clock/clock';
import { MessageBus } from '../infra/kafka/message-bus';
import { JobsService } from '../jobs/jobs.service';
import { LedgerModule } from '../ledger/ledger.module';
import { EventExtensions } from '../metering/event-extensions';
import { LifecycleConsumer } from '../metering/lifecycle-consumer';
import { MeteringModule } from '../metering/metering.module';
import { SettlementHooks } from '../metering/settlement-hooks';
import { PricingModule } from '../pricing/pricing.module';
import { SpendLimitsModule } from '../spend-limits/spend-limits.module';
import { ANCILLARY_TYPES, ancillaryValidator, type AncillaryEvent } from './ancillary-event';
import { AncillaryUsageService } from './ancillary-usage.service';
import { UnpricedCounter } from './unpriced-counter';

/**
 * Wires ancillary usage in: its event types on `POST /v1/events` and the lifecycle topic (through
 * metering's EventExtensions), its own topic (consumed by the lifecycle consumer's machinery: same
 * parsing, limits and dead-letter rules), and the hourly accrual job.
 */
@Injectable()
export class AncillaryWiring implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    private readonly usage: AncillaryUsageService,
    private readonly extensions: EventExtensions,
    private readonly settlementHooks: SettlementHooks,
    private readonly consumer: LifecycleConsumer,
    private readonly bus: MessageBus,
    private readonly jobs: JobsService,
    private readonly schedules: SchedulerRegistry,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    const validate = ancillaryValidator(() => this.clock.now());
    this.extensions.register({
      types: new Set(ANCILLARY_TYPES),
      validate,
      ingest: (events, opts) => this.usage.ingest(events as AncillaryEvent[], opts),
    });
    this.settlementHooks.register((em, settled) => this.usage.chargePausedMemory(em, settled));
    const kafka = this.config.kafka;
    if (kafka) this.bus.subscribe({ topic: kafka.topics.ancillary, handle: (batch) => this.consumer.handle(batch, kafka.topics.ancillaryDlq) });
  }

  onApplicationBootstrap(): void {
    this.jobs.register('ancillary-accrual', () => this.usage.accrue());
    if (!this.config.cronEnabled) return;
    const every = this.config.ancillary.accrualIntervalMs;
    this.schedules.addInterval('ancillary-accrual', setInterval(() => void this.jobs.tick('ancillary-accrual'), every));
    this.jobs.scheduledEvery('ancillary-accrual', every);
  }
}

@Module({
  imports: [LedgerModule, PricingModule, MeteringModule, SpendLimitsModule],
  providers: [AncillaryUsageService, UnpricedCounter, AncillaryWiring],
  exports: [AncillaryUsageService],
})
export class AncillaryModule {}
