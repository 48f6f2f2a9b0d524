// Owns: ancillary_events, ancillary_items, ancillary_charges, ancillary_commands.
import { Inject, Injectable, Module, type OnApplicationBootstrap, type OnModuleInit } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { Clock } from 'src/infra/clock/clock';
import { MessageBus } from 'src/infra/kafka/message-bus';
import { JobsService } from 'src/jobs/jobs.service';
import { LedgerModule } from 'src/ledger/ledger.module';
import type { ExtraEventHandler } from 'src/metering/event-extensions';
import { LifecycleConsumer } from 'src/metering/lifecycle-consumer';
import { MeteringModule } from 'src/metering/metering.module';
import type { SettlementHook } from 'src/metering/settlement-hooks';
import { PricingModule } from 'src/pricing/pricing.module';
import { SpendLimitsModule } from 'src/spend-limits/spend-limits.module';
import { ANCILLARY_TYPES, ancillaryValidator, type AncillaryEvent } from './ancillary-event';
import { AncillaryUsageService } from './ancillary-usage.service';
import { UnpricedCounter } from './unpriced-counter';

/** Ancillary events on `POST /v1/events` and the lifecycle topic (metering's EXTRA_EVENT_HANDLERS). */
export function ancillaryEventHandler(usage: AncillaryUsageService, clock: Clock): ExtraEventHandler {
  return {
    types: new Set(ANCILLARY_TYPES),
    validate: ancillaryValidator(() => clock.now()),
    ingest: (events, opts) => usage.ingest(events as AncillaryEvent[], opts),
  };
}

/** Paused memory metered when a runtime settles (metering's SETTLEMENT_HOOKS). */
export function pausedMemoryHook(usage: AncillaryUsageService): SettlementHook {
  return (em, settled) => usage.chargePausedMemory(em, settled);
}

/**
 * Wires ancillary usage in: its own topic (consumed by the lifecycle consumer's machinery: same
 * parsing, limits and dead-letter rules) and the hourly accrual job. Its event types on the lifecycle
 * paths and its settlement hook are given to metering where the app is composed (src/extensions.module.ts).
 */
@Injectable()
export class AncillaryWiring implements OnModuleInit, OnApplicationBootstrap {
  constructor(
    private readonly usage: AncillaryUsageService,
    private readonly consumer: LifecycleConsumer,
    private readonly bus: MessageBus,
    private readonly jobs: JobsService,
    private readonly schedules: SchedulerRegistry,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onModuleInit(): void {
    if (this.config.kafka) {
      const { topics } = this.config;
      this.bus.subscribe({ topic: topics.ancillary, handle: (batch) => this.consumer.handle(batch, topics.ancillaryDlq) });
    }
  }

  onApplicationBootstrap(): void {
    this.jobs.register('ancillary-accrual', () => this.usage.accrue());
    if (!this.config.cronEnabled) return;
    const every = this.config.ancillary.accrualIntervalMs;
    this.schedules.addInterval(
      'ancillary-accrual',
      setInterval(() => void this.jobs.tick('ancillary-accrual'), every),
    );
    this.jobs.scheduledEvery('ancillary-accrual', every);
  }
}

@Module({
  imports: [LedgerModule, PricingModule, MeteringModule, SpendLimitsModule],
  providers: [AncillaryUsageService, UnpricedCounter, AncillaryWiring],
  exports: [AncillaryUsageService],
})
export class AncillaryModule {}
