import { Controller, Get, Headers, HttpCode, Inject, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { z } from 'zod';
import { Public } from 'src/common/auth/auth.decorators';
import { Doc } from 'src/common/http/openapi';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { BillingException } from 'src/common/errors/billing.exception';
import { withQueryBound } from 'src/common/database/query-bounds';
import { MessageBus } from 'src/infra/kafka/message-bus';
import { Metrics } from './metrics';
import { METRICS_UNAUTHENTICATED, metricsAuthorized } from './metrics-listener';

/** How long readiness waits for the database's answer. */
const READY_TIMEOUT_MS = 2_000;

const check = z.strictObject({ ok: z.boolean(), detail: z.string() });
const readySchema = z
  .strictObject({ status: z.enum(['ready', 'not ready']), checks: z.strictObject({ database: check, kafka: check }) })
  .meta({ id: 'Readiness' });

@Controller()
@Public()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly bus: MessageBus,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('health/live')
  @HttpCode(200)
  @Doc({
    id: 'live',
    summary: 'Liveness',
    tag: 'Health',
    responses: { 200: { description: 'Alive', schema: z.strictObject({ status: z.literal('ok') }) } },
  })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready when the database answers: without it this instance can serve nothing, while reservations,
   * events over HTTP and reports do not need Kafka. Kafka's state is shown (an alert watches consumer
   * lag and the outbox) but does not take the instance out of its load balancer.
   */
  @Get('health/ready')
  @Doc({
    id: 'ready',
    summary: 'Readiness: 200 when the database answers; Kafka is reported in the body but does not fail it',
    tag: 'Health',
    responses: { 200: { description: 'Ready', schema: readySchema }, 503: { description: 'Not ready', schema: readySchema } },
  })
  async ready(@Res() reply: FastifyReply): Promise<void> {
    // A database that does not answer (a network partition, a frozen server) is not ready either:
    // the answer comes within READY_TIMEOUT_MS, so a load balancer's probe never hangs.
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<{ ok: boolean; detail: string }>((resolve) => {
      timer = setTimeout(() => resolve({ ok: false, detail: `no answer within ${READY_TIMEOUT_MS} ms` }), READY_TIMEOUT_MS);
    });
    const database = await Promise.race([
      // Its query is bound too, so a silent database does not keep its connection past the answer.
      withQueryBound(READY_TIMEOUT_MS, () => this.ds.query('SELECT 1'))
        .then(() => ({ ok: true, detail: 'ok' }))
        .catch((e: unknown) => ({ ok: false, detail: String(e) })),
      silent,
    ]);
    clearTimeout(timer);
    const kafka = this.bus.health();
    const ok = database.ok;
    await reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', checks: { database, kafka } });
  }

  /**
   * Prometheus; behind METRICS_BEARER_TOKEN when it is set (the metrics name routes and volumes).
   * With METRICS_PORT set they are served on that listener alone (MetricsListener), and 404 here.
   */
  @Get('metrics')
  @Doc({
    id: 'metrics',
    summary: 'Prometheus metrics (behind METRICS_BEARER_TOKEN when it is set; on METRICS_PORT instead when that is set)',
    tag: 'Health',
    responses: { 200: { description: 'The exposition format', text: 'text/plain' } },
    errors: ['DL_BILLING_UNAUTHENTICATED', 'DL_BILLING_NOT_FOUND'],
  })
  async scrape(
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string> {
    if (this.config.metricsListener) throw BillingException.notFound('Route');
    if (!metricsAuthorized(this.config.metricsBearerToken, authorization)) throw METRICS_UNAUTHENTICATED();
    // Set here, not by a decorator: a refusal is the contract's JSON error body.
    void reply.header('content-type', 'text/plain; version=0.0.4');
    return this.metrics.registry.metrics();
  }
}
