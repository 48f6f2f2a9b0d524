import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Access } from '../accounts/auth/auth.decorators';
import { BillingException, type Finding } from '../common/errors/billing.exception';
import { Clock } from '../infra/clock/clock';
import { Metrics } from '../health/metrics';
import { lifecycleValidator, type LifecycleEvent, type LifecycleValidator } from './lifecycle-event';
import { LifecycleIngestService, type IngestResult } from './lifecycle-ingest.service';

const MAX_EVENTS = 10_000;

/** Lifecycle events over HTTP, for deployments without Kafka: one event, an array, or `{events: [...]}`. */
@Controller('v1/events')
@Access('control-plane')
export class EventsController {
  private readonly validate: LifecycleValidator;

  constructor(
    private readonly ingest: LifecycleIngestService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
  ) {
    this.validate = lifecycleValidator(() => this.clock.now());
  }

  @Post()
  @HttpCode(200)
  async post(@Body() body: unknown): Promise<IngestResult> {
    const { items, prefix } = unwrap(body);
    const findings: Finding[] = [];
    const events: LifecycleEvent[] = [];
    items.forEach((item, i) => {
      const parsed = this.validate(item, prefix(i));
      if (parsed.ok) events.push(parsed.event);
      else findings.push(...parsed.findings);
    });
    // All or nothing: a refused request applies none of its events, so a corrected retry loses none.
    if (findings.length > 0) throw BillingException.invalid(findings, 'One or more events are invalid');
    const result = await this.ingest.ingest(events);
    this.metrics.eventsApplied.inc({ source: 'http' }, result.accepted);
    this.metrics.eventsDuplicate.inc({ source: 'http' }, result.duplicates);
    return result;
  }
}

function unwrap(body: unknown): { items: unknown[]; prefix: (i: number) => string } {
  if (Array.isArray(body)) return checkSize(body, (i) => `[${i}]`);
  if (typeof body === 'object' && body !== null && 'events' in body) {
    const events = (body as { events: unknown }).events;
    if (!Array.isArray(events)) throw BillingException.invalid([{ field: 'events', message: 'must be an array' }]);
    return checkSize(events, (i) => `events[${i}]`);
  }
  if (typeof body === 'object' && body !== null) return { items: [body], prefix: () => '' };
  throw BillingException.invalid([{ field: 'body', message: 'must be an event object, an array of events or {events: [...]}' }]);
}

function checkSize(items: unknown[], prefix: (i: number) => string): { items: unknown[]; prefix: (i: number) => string } {
  if (items.length === 0) throw BillingException.invalid([{ field: 'events', message: 'must not be empty' }]);
  if (items.length > MAX_EVENTS) {
    throw BillingException.invalid([{ field: 'events', message: `at most ${MAX_EVENTS} events per request` }]);
  }
  return { items, prefix };
}
