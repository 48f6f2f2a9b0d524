import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '../common/config/config';
import { Clock } from '../infra/clock/clock';
import { MessageBus, type InboundMessage } from '../infra/kafka/message-bus';
import { Metrics } from '../health/metrics';
import { lifecycleValidator, parseLifecycleMessage, type LifecycleEvent, type LifecycleValidator } from './lifecycle-event';
import { LifecycleIngestService } from './lifecycle-ingest.service';

/**
 * Consumes `runtime.lifecycle.v1`: messages that cannot be parsed or validated go to the
 * dead-letter topic with their reason (before the batch's offsets move), the rest to the handler.
 */
@Injectable()
export class LifecycleConsumer implements OnModuleInit {
  private readonly logger = new Logger('LifecycleConsumer');
  private readonly validate: LifecycleValidator;

  constructor(
    private readonly bus: MessageBus,
    private readonly ingest: LifecycleIngestService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.validate = lifecycleValidator(() => this.clock.now());
  }

  onModuleInit(): void {
    const kafka = this.config.kafka;
    if (!kafka) return;
    this.bus.subscribe({ topic: kafka.topics.lifecycle, handle: (batch) => this.handle(batch, kafka.topics.lifecycleDlq) });
  }

  async handle(batch: InboundMessage[], dlqTopic: string): Promise<void> {
    const good: LifecycleEvent[] = [];
    const poison = [];
    for (const message of batch) {
      const parsed = parseLifecycleMessage(message.value, this.validate);
      if (parsed.ok) good.push(parsed.event);
      else poison.push({ message, reason: parsed.reason, findings: parsed.findings });
    }
    if (poison.length > 0) {
      await this.bus.publish(
        poison.map(({ message, reason, findings }) => ({
          topic: dlqTopic,
          key: message.key ?? '',
          value: message.value?.toString('utf8') ?? '',
          headers: {
            'x-dlq-reason': reason,
            'x-dlq-code': 'DL_BILLING_REQUEST_INVALID',
            'x-dlq-findings': JSON.stringify(findings),
            'x-dlq-source': `${message.topic}/${message.partition}/${message.offset}`,
          },
        })),
      );
      this.metrics.deadLettered.inc(poison.length);
      this.logger.warn(`${poison.length} lifecycle message(s) sent to ${dlqTopic}: ${poison[0]?.reason ?? ''}`);
    }
    const result = await this.ingest.ingest(good);
    this.metrics.eventsApplied.inc({ source: 'kafka' }, result.accepted);
    this.metrics.eventsDuplicate.inc({ source: 'kafka' }, result.duplicates);
  }
}
