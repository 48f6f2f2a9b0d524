import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** The Stripe event types the service acts on; any other type is counted as `other` (bounded labels). */
export const STRIPE_EVENT_TYPES = new Set([
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'invoice.paid',
  'invoice.payment_failed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'charge.refunded',
  'charge.dispute.created',
]);

/**
 * Prometheus metrics of this process (one registry per application instance). Labels are bounded:
 * route templates, error codes, job names, topics and partitions, never an account or runtime id.
 * A job's name is `job_name`, never `job`: Prometheus gives every series its scrape job as `job`
 * and would rename ours to `exported_job`.
 * What the database knows for the whole fleet (outbox, open holds, job runs, pool) is read at
 * scrape time by `DatabaseMetrics`; what happens in this process is counted here.
 */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'dl_billing_http_request_duration_seconds',
    help: 'HTTP request duration by route template, status and error code (code is "" on success)',
    labelNames: ['method', 'route', 'status', 'code'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly reservations = new Counter({
    name: 'dl_billing_reservations_total',
    help: 'POST /v1/reservations answers: created (201), replayed (200) or refused (with its error code)',
    labelNames: ['outcome', 'code'],
    registers: [this.registry],
  });
  readonly credits = new Counter({
    name: 'dl_billing_credits_microcredits_total',
    help: 'Micro-credits moved by committed ledger writes of this instance, by flow',
    labelNames: ['flow'],
    registers: [this.registry],
  });
  readonly eventsApplied = new Counter({
    name: 'dl_billing_lifecycle_events_applied_total',
    help: 'Lifecycle events applied (first delivery)',
    labelNames: ['source'],
    registers: [this.registry],
  });
  readonly eventsDuplicate = new Counter({
    name: 'dl_billing_lifecycle_events_duplicate_total',
    help: 'Lifecycle events skipped because their id was already applied',
    labelNames: ['source'],
    registers: [this.registry],
  });
  readonly deadLettered = new Counter({
    name: 'dl_billing_lifecycle_dead_lettered_total',
    help: 'Lifecycle messages sent to the dead-letter topic',
    registers: [this.registry],
  });
  readonly membershipDeadLettered = new Counter({
    name: 'dl_billing_membership_dead_lettered_total',
    help: 'Membership messages sent to the dead-letter topic',
    registers: [this.registry],
  });
  readonly ancillaryEvents = new Counter({
    name: 'dl_billing_ancillary_events_applied_total',
    help: 'Ancillary usage events (snapshots, volumes, egress) applied (first delivery)',
    registers: [this.registry],
  });
  readonly ancillaryUnpriced = new Counter({
    name: 'dl_billing_ancillary_unpriced_total',
    help: 'Ancillary usage metered while its rate-card item is unpriced (not charged), in the unit of its kind',
    labelNames: ['kind', 'unit'],
    registers: [this.registry],
  });
  readonly consumerLag = new Gauge({
    name: 'dl_billing_kafka_consumer_lag_messages',
    help: "Messages of a partition not yet handled: this instance's view after its last batch, or the group's committed offset read from the broker (every 30 s), whichever is newer",
    labelNames: ['topic', 'partition'],
    registers: [this.registry],
  });
  readonly consumerLastBatch = new Gauge({
    name: 'dl_billing_kafka_consumer_last_batch_timestamp_seconds',
    help: 'When this instance last handled a batch of the partition',
    labelNames: ['topic', 'partition'],
    registers: [this.registry],
  });
  readonly outboxPublished = new Counter({
    name: 'dl_billing_outbox_published_total',
    help: 'Outbox messages published to Kafka by this instance',
    labelNames: ['topic'],
    registers: [this.registry],
  });
  readonly jobRuns = new Counter({
    name: 'dl_billing_job_runs_total',
    help: 'Scheduled job runs by this instance, by result (succeeded, failed, skipped: another instance held the lock)',
    labelNames: ['job_name', 'result'],
    registers: [this.registry],
  });
  readonly jobInterval = new Gauge({
    name: 'dl_billing_job_interval_seconds',
    help: 'How often the job is scheduled to run in this instance',
    labelNames: ['job_name'],
    registers: [this.registry],
  });
  readonly jobDuration = new Histogram({
    name: 'dl_billing_job_duration_seconds',
    help: 'Duration of the job runs of this instance',
    labelNames: ['job_name'],
    buckets: [0.01, 0.1, 0.5, 1, 5, 15, 60, 300, 900],
    registers: [this.registry],
  });
  readonly stripeCalls = new Counter({
    name: 'dl_billing_stripe_api_calls_total',
    help: 'Stripe API calls by operation and outcome (ok, error)',
    labelNames: ['operation', 'outcome'],
    registers: [this.registry],
  });
  readonly stripeWebhooks = new Counter({
    name: 'dl_billing_stripe_webhooks_total',
    help: 'Stripe webhooks by event type (other for types not acted on) and result',
    labelNames: ['type', 'result'],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'dl_billing_' });
  }

  /** One answered HTTP request; a reservation is also counted by its outcome. */
  observeHttp(method: string, route: string, status: number, code: string, seconds: number): void {
    this.httpDuration.observe({ method, route, status: String(status), code }, seconds);
    if (method === 'POST' && route === '/v1/reservations') {
      const outcome = status === 201 ? 'created' : status === 200 ? 'replayed' : 'refused';
      this.reservations.inc({ outcome, code });
    }
  }

  stripeWebhook(type: string | null, result: 'processed' | 'duplicate' | 'ignored' | 'failed' | 'signature_invalid' | 'refused'): void {
    this.stripeWebhooks.inc({ type: type && STRIPE_EVENT_TYPES.has(type) ? type : 'other', result });
  }

  /** Times a Stripe call and counts its outcome. */
  async stripeCall<T>(operation: string, work: () => Promise<T>): Promise<T> {
    try {
      const result = await work();
      this.stripeCalls.inc({ operation, outcome: 'ok' });
      return result;
    } catch (error) {
      this.stripeCalls.inc({ operation, outcome: 'error' });
      throw error;
    }
  }
}
