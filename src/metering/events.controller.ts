import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import { Access } from 'src/common/auth/auth.decorators';
import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { Clock } from 'src/infra/clock/clock';
import { Metrics } from 'src/health/metrics';
import { Doc } from 'src/common/http/openapi';
import { eventsBodySchema, ingestResultSchema, MAX_EVENTS } from './dto/event.dto';
import { LIFECYCLE_TYPES, lifecycleValidator, type LifecycleEvent, type LifecycleValidator } from './lifecycle-event';
import { EventExtensions, ExtraEventsRefused } from './event-extensions';
import { EventsRefused, LifecycleIngestService, type IngestResult } from './lifecycle-ingest.service';

/** Lifecycle events over HTTP, for deployments without Kafka: one event, an array, or `{events: [...]}`. */
@Controller('v1/events')
@Access('control-plane')
export class EventsController {
  private readonly validate: LifecycleValidator;

  constructor(
    private readonly ingest: LifecycleIngestService,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly extensions: EventExtensions,
  ) {
    this.validate = lifecycleValidator(() => this.clock.now());
  }

  @Post()
  @HttpCode(200)
  @Doc({
    id: 'postEvents',
    summary: 'Lifecycle events: one event, an array of events, or {events: [...]}',
    description:
      'The same events, handler and idempotency (on `id`) as the Kafka topic `runtime.lifecycle.v1`. All or nothing: a request with an invalid event applies none, ' +
      'and every finding names the event by its place (`events[3].seq`).',
    tag: 'Events',
    body: eventsBodySchema,
    responses: { 200: { description: 'Applied', schema: ingestResultSchema } },
  })
  async post(@Body() body: unknown): Promise<Pick<IngestResult, 'accepted' | 'duplicates'>> {
    const { items, prefix } = unwrap(body);
    const findings: Finding[] = [];
    const events: LifecycleEvent[] = [];
    const indexOf = new Map<LifecycleEvent, number>();
    // Other modules' event types (snapshots, volumes, egress) go to their handler, validated with the rest.
    const extra = {
      handler: undefined as ReturnType<EventExtensions['handlerOf']>,
      events: [] as unknown[],
      indexOf: new Map<unknown, number>(),
    };
    items.forEach((item, i) => {
      const handler = this.extensions.handlerOf(item);
      const parsed = handler ? handler.validate(item, prefix(i)) : this.validate(item, prefix(i));
      if (!parsed.ok) findings.push(...parsed.findings.map((f) => (f.field === joinField(prefix(i), 'type') ? this.typeFinding(f) : f)));
      else if (handler) {
        extra.handler = handler;
        extra.events.push(parsed.event);
        extra.indexOf.set(parsed.event, i);
      } else {
        events.push(parsed.event as LifecycleEvent);
        indexOf.set(parsed.event as LifecycleEvent, i);
      }
    });
    // All or nothing: a refused request applies none of its events, so a corrected retry loses none.
    if (findings.length > 0) throw BillingException.invalid(findings, 'One or more events are invalid');
    let other = { accepted: 0, duplicates: 0 };
    try {
      if (extra.handler) other = await extra.handler.ingest(extra.events, { allOrNothing: true });
    } catch (error) {
      if (!(error instanceof ExtraEventsRefused)) throw error;
      const named = error.refused.flatMap((r) =>
        r.findings.map((f) => ({ ...f, field: joinField(prefix(extra.indexOf.get(r.event) ?? 0), f.field) })),
      );
      throw BillingException.invalid(named, 'One or more events are invalid');
    }
    if (events.length === 0) return { accepted: other.accepted, duplicates: other.duplicates };
    let result: IngestResult;
    try {
      result = await this.ingest.ingest(events, { allOrNothing: true });
    } catch (error) {
      if (!(error instanceof EventsRefused)) throw error;
      const named = error.refused.flatMap((r) =>
        r.findings.map((f) => ({ ...f, field: joinField(prefix(indexOf.get(r.event) ?? 0), f.field) })),
      );
      throw BillingException.invalid(named, 'One or more events are invalid');
    }
    this.metrics.eventsApplied.inc({ source: 'http' }, result.accepted);
    this.metrics.eventsDuplicate.inc({ source: 'http' }, result.duplicates);
    return { accepted: result.accepted + other.accepted, duplicates: result.duplicates + other.duplicates };
  }

  /** An unknown `type` names every type this endpoint takes: the lifecycle's and the other modules' (snapshots, volumes, egress). */
  private typeFinding(finding: Finding): Finding {
    if (!finding.message.startsWith('Invalid option')) return finding;
    const types = [...LIFECYCLE_TYPES, ...this.extensions.types()].map((t) => `"${t}"`).join('|');
    return { ...finding, message: `Invalid option: expected one of ${types}` };
  }
}

function unwrap(body: unknown): { items: unknown[]; prefix: (i: number) => string } {
  // Findings name an event by its place, `events[3].seq`, whichever of the two list forms was sent.
  if (Array.isArray(body)) return checkSize(body, (i) => `events[${i}]`);
  if (typeof body === 'object' && body !== null && 'events' in body) {
    const events = (body as { events: unknown }).events;
    const others = Object.keys(body).filter((k) => k !== 'events');
    if (others.length > 0) throw BillingException.invalid(others.map((k) => ({ field: k, message: 'is not a field of {events: [...]}' })));
    if (!Array.isArray(events)) throw BillingException.invalid([{ field: 'events', message: 'must be an array' }]);
    return checkSize(events, (i) => `events[${i}]`);
  }
  if (typeof body === 'object' && body !== null) return { items: [body], prefix: () => '' };
  throw BillingException.invalid([{ field: 'body', message: 'must be an event object, an array of events or {events: [...]}' }]);
}

function joinField(prefix: string, field: string): string {
  return prefix ? `${prefix}.${field}` : field;
}

function checkSize(items: unknown[], prefix: (i: number) => string): { items: unknown[]; prefix: (i: number) => string } {
  if (items.length === 0) throw BillingException.invalid([{ field: 'events', message: 'must not be empty' }]);
  if (items.length > MAX_EVENTS) {
    throw BillingException.invalid([{ field: 'events', message: `at most ${MAX_EVENTS} events per request` }]);
  }
  return { items, prefix };
}
