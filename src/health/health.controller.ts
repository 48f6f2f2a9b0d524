import { Controller, Get, Header, HttpCode, Res } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { FastifyReply } from 'fastify';
import { DataSource } from 'typeorm';
import { Public } from '../accounts/auth/auth.decorators';
import { MessageBus } from '../infra/kafka/message-bus';
import { Metrics } from './metrics';

@Controller()
@Public()
export class HealthController {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly bus: MessageBus,
    private readonly metrics: Metrics,
  ) {}

  @Get('health/live')
  @HttpCode(200)
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Ready when the database answers: without it this instance can serve nothing, while reservations,
   * events over HTTP and reports do not need Kafka. Kafka's state is shown (an alert watches consumer
   * lag and the outbox) but does not take the instance out of its load balancer.
   */
  @Get('health/ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const database = await this.ds
      .query('SELECT 1')
      .then(() => ({ ok: true, detail: 'ok' }))
      .catch((e: unknown) => ({ ok: false, detail: String(e) }));
    const kafka = this.bus.health();
    const ok = database.ok;
    await reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', checks: { database, kafka } });
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4')
  async scrape(): Promise<string> {
    return this.metrics.registry.metrics();
  }
}
