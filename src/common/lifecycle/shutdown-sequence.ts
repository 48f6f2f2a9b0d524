import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { MessageBus } from 'src/infra/kafka/message-bus';

/**
 * The order of a graceful stop, where Nest's own order does not give it. Nest closes the HTTP
 * server (answering the requests in flight) before any `onApplicationShutdown` hook, but runs the
 * hooks of global modules — the database's and Kafka's alike — in no order among themselves: the
 * pool could close under a Kafka batch in flight. This hook belongs to the root module, whose hooks
 * run before any other module's: the consumers finish their batches and leave their groups here,
 * while the database is still open; the outbox relay, the schedules and the pool stop after.
 */
@Injectable()
export class ShutdownSequence implements OnApplicationShutdown {
  private readonly logger = new Logger('Shutdown');

  constructor(private readonly bus: MessageBus) {}

  async onApplicationShutdown(): Promise<void> {
    const started = Date.now();
    await this.bus.stopConsuming();
    this.logger.debug({ msg: 'Kafka consumers stopped', ms: Date.now() - started });
  }
}
