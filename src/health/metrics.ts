import { Injectable } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** Prometheus metrics of this process (one registry per application instance). */
@Injectable()
export class Metrics {
  readonly registry = new Registry();
  readonly httpDuration = new Histogram({
    name: 'dl_billing_http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
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

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'dl_billing_' });
  }
}
