import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { rows } from 'src/common/database/transaction';
import { Metrics } from 'src/health/metrics';
import { MessageBus } from 'src/infra/kafka/message-bus';

const BATCH = 500;
/** Published messages are kept a week (for an operator to look at what was sent), then deleted. */
export const KEEP_PUBLISHED_HOURS = 168;
const PRUNE_EVERY_MS = 10 * 60_000;
const PRUNE_BATCH = 5_000;

/**
 * Publishes outbox rows to Kafka and marks them sent. Rows are claimed with FOR UPDATE SKIP LOCKED,
 * so several instances relay without sending a row twice in normal operation; a crash between the
 * publish and the mark re-sends, which consumers dedupe by the message id.
 */
@Injectable()
export class OutboxRelayService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('OutboxRelay');
  private timer?: NodeJS.Timeout;
  private running?: Promise<number>;
  private prunedAt = 0;

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly bus: MessageBus,
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.bus.enabled) {
      // Left out on purpose (the CLI), the rows stay for the service's relay: nothing to warn about.
      if (!this.config.kafkaLeftOut) this.logger.warn('Kafka is not configured: outbox messages stay in the outbox table');
      return;
    }
    const tick = (): void => {
      this.running = this.relayAll()
        .then(async (sent) => {
          if (Date.now() - this.prunedAt >= PRUNE_EVERY_MS) {
            this.prunedAt = Date.now();
            await this.prunePublished();
          }
          return sent;
        })
        .catch((e: unknown) => {
          this.logger.warn(`relay failed, will retry: ${String(e)}`);
          return 0;
        })
        .finally(() => {
          this.timer = setTimeout(tick, this.config.outboxRelayIntervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async onApplicationShutdown(): Promise<void> {
    clearTimeout(this.timer);
    await this.running;
    clearTimeout(this.timer);
  }

  /** Relays until the outbox is empty; returns the number of messages published. */
  async relayAll(): Promise<number> {
    let total = 0;
    for (;;) {
      const sent = await this.relayOnce();
      total += sent;
      if (sent < BATCH) return total;
    }
  }

  /**
   * Deletes the messages published more than KEEP_PUBLISHED_HOURS ago, oldest first, in batches
   * (each looks at the oldest PRUNE_BATCH rows only, through the primary key, so a table with
   * nothing to delete costs one short index scan); a message not yet published is never deleted.
   * Returns how many were deleted.
   */
  async prunePublished(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const [gone] = await rows<{ n: number }>(
        this.ds,
        `WITH oldest AS (SELECT id FROM outbox ORDER BY id LIMIT ${PRUNE_BATCH}),
              gone AS (DELETE FROM outbox o USING oldest
                       WHERE o.id = oldest.id AND o.published_at < now() - make_interval(hours => $1) RETURNING 1)
         SELECT count(*)::int AS n FROM gone`,
        [KEEP_PUBLISHED_HOURS],
      );
      deleted += gone?.n ?? 0;
      if (!gone || gone.n === 0) return deleted;
    }
  }

  /** What waits to be published, by topic: how many messages and since when (for operators). */
  async backlog(): Promise<{ topic: string; pending: number; oldestAt: string; oldestAgeSeconds: number }[]> {
    // The age by the database's clock, which stamped the rows.
    const found: { topic: string; pending: number; oldest: Date; age: number }[] = await this.ds.query(
      `SELECT topic, count(*)::int AS pending, min(created_at) AS oldest, floor(extract(epoch FROM now() - min(created_at)))::int AS age
       FROM outbox WHERE published_at IS NULL GROUP BY topic ORDER BY topic`,
    );
    return found.map((r) => ({
      topic: r.topic,
      pending: r.pending,
      oldestAt: new Date(r.oldest).toISOString(),
      oldestAgeSeconds: Math.max(0, r.age),
    }));
  }

  private relayOnce(): Promise<number> {
    return this.ds.transaction(async (em) => {
      const rows: { id: string; topic: string; key: string; payload: Record<string, unknown> }[] = await em.query(
        `SELECT id, topic, key, payload FROM outbox WHERE published_at IS NULL ORDER BY id LIMIT ${BATCH} FOR UPDATE SKIP LOCKED`,
      );
      if (rows.length === 0) return 0;
      await this.bus.publish(rows.map((r) => ({ topic: r.topic, key: r.key, value: JSON.stringify(r.payload) })));
      await em.query(`UPDATE outbox SET published_at = now() WHERE id = ANY($1::bigint[])`, [rows.map((r) => r.id)]);
      for (const r of rows) this.metrics.outboxPublished.inc({ topic: r.topic });
      return rows.length;
    });
  }
}
