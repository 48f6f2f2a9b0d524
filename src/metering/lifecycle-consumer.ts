import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import type { Finding } from 'src/common/errors/billing.exception';
import { Clock } from 'src/infra/clock/clock';
import { MessageBus, type InboundMessage } from 'src/infra/kafka/message-bus';
import { Metrics } from 'src/health/metrics';
import { deadLetter, publishDeadLetters } from 'src/messaging/dead-letter';
import { lifecycleValidator, parseLifecycleMessage, type LifecycleEvent, type LifecycleValidator } from './lifecycle-event';
import { EventExtensions, type ExtraEventHandler } from './event-extensions';
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
    private readonly extensions: EventExtensions,
  ) {
    this.validate = lifecycleValidator(() => this.clock.now());
  }

  onModuleInit(): void {
    if (!this.config.kafka) return;
    const { topics } = this.config;
    this.bus.subscribe({ topic: topics.lifecycle, handle: (batch) => this.handle(batch, topics.lifecycleDlq) });
  }

  async handle(batch: InboundMessage[], dlqTopic: string): Promise<void> {
    const good: { message: InboundMessage; event: LifecycleEvent }[] = [];
    const poison: Poison[] = [];
    const extra: { message: InboundMessage; event: unknown; handler: ExtraEventHandler }[] = [];
    for (const message of batch) {
      const parsed = parseLifecycleMessage(message.value, this.validate);
      if (parsed.ok) good.push({ message, event: parsed.event });
      else if (!this.routedElsewhere(message, parsed.reason, extra, poison)) {
        poison.push({ message, reason: parsed.reason, findings: parsed.findings, code: 'DL_BILLING_REQUEST_INVALID' });
      }
    }
    await this.deadLetter(poison, dlqTopic);
    if (extra.length > 0) await this.deadLetter(await this.applyExtra(extra), dlqTopic);
    try {
      await this.deadLetter(await this.apply(good), dlqTopic);
    } catch (error) {
      if (!isDataError(error)) throw error; // the database is away: kafkajs retries the batch
      // One event the database refuses must not block its partition: find it, park it, apply the rest.
      for (const one of good) {
        try {
          await this.deadLetter(await this.apply([one]), dlqTopic);
        } catch (single) {
          if (!isDataError(single)) throw single;
          const reason = `processing failed: ${(single as Error).message}`;
          await this.deadLetter(
            [{ message: one.message, reason, findings: [{ field: 'value', message: reason }], code: 'DL_BILLING_INTERNAL' }],
            dlqTopic,
          );
        }
      }
    }
  }

  /**
   * A message of another module's event type (valid JSON the lifecycle schema refused: only then is
   * it looked at again, so lifecycle events pay nothing for this) goes to that module's handler.
   */
  private routedElsewhere(
    message: InboundMessage,
    reason: string,
    extra: { message: InboundMessage; event: unknown; handler: ExtraEventHandler }[],
    poison: Poison[],
  ): boolean {
    if (!reason.startsWith('invalid event')) return false;
    const json: unknown = JSON.parse(message.value!.toString('utf8'));
    const handler = this.extensions.handlerOf(json);
    if (!handler) return false;
    const parsed = handler.validate(json);
    if (parsed.ok) extra.push({ message, event: parsed.event, handler });
    else poison.push({ message, reason: parsed.reason, findings: parsed.findings, code: 'DL_BILLING_REQUEST_INVALID' });
    return true;
  }

  /** Applies other modules' events; returns those to park (refused, or refused by the database). */
  private async applyExtra(extra: { message: InboundMessage; event: unknown; handler: ExtraEventHandler }[]): Promise<Poison[]> {
    const handler = extra[0]!.handler;
    try {
      const result = await handler.ingest(
        extra.map((x) => x.event),
        {},
      );
      return result.refused.map(({ event, findings }) => ({
        message: extra.find((x) => x.event === event)!.message,
        reason: `invalid event: ${findings.map((f) => `${f.field}: ${f.message}`).join('; ')}`,
        findings,
        code: 'DL_BILLING_REQUEST_INVALID' as const,
      }));
    } catch (error) {
      if (!isDataError(error)) throw error;
      const reason = `processing failed: ${(error as Error).message}`;
      return extra.map((x) => ({
        message: x.message,
        reason,
        findings: [{ field: 'value', message: reason }],
        code: 'DL_BILLING_INTERNAL' as const,
      }));
    }
  }

  /** Applies the events; returns those refused by what the database knows (not applied), to be parked. */
  private async apply(good: { message: InboundMessage; event: LifecycleEvent }[]): Promise<Poison[]> {
    const result = await this.ingest.ingest(good.map((g) => g.event));
    this.metrics.eventsApplied.inc({ source: 'kafka' }, result.accepted);
    this.metrics.eventsDuplicate.inc({ source: 'kafka' }, result.duplicates);
    return result.refused.map(({ event, findings }) => ({
      message: good.find((g) => g.event === event)!.message,
      reason: `invalid event: ${findings.map((f) => `${f.field}: ${f.message}`).join('; ')}`,
      findings,
      code: 'DL_BILLING_REQUEST_INVALID' as const,
    }));
  }

  private async deadLetter(poison: Poison[], dlqTopic: string): Promise<void> {
    if (poison.length === 0) return;
    const letters = poison.map(({ message, reason, findings, code }) => deadLetter(dlqTopic, message, reason, code, findings));
    await publishDeadLetters(this.bus, letters);
    this.metrics.deadLettered.inc(poison.length);
    this.logger.warn(`${poison.length} lifecycle message(s) sent to ${dlqTopic}: ${poison[0]?.reason.slice(0, 500) ?? ''}`);
  }
}

interface Poison {
  message: InboundMessage;
  reason: string;
  findings: Finding[];
  code: 'DL_BILLING_REQUEST_INVALID' | 'DL_BILLING_INTERNAL';
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity constraint): the data, not the database, is at fault. */
function isDataError(error: unknown): boolean {
  const e = error as { code?: unknown; driverError?: { code?: unknown } } | null;
  const code = e?.code ?? e?.driverError?.code;
  return typeof code === 'string' && (code.startsWith('22') || code.startsWith('23'));
}
