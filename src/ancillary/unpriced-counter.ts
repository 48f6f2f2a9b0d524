import { Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type {
  DataSource,
  EntityManager,
  EntitySubscriberInterface,
  QueryRunner,
  TransactionCommitEvent,
  TransactionRollbackEvent,
} from 'typeorm';
import { Metrics } from 'src/health/metrics';
import { quantityMicros, UNIT_OF, type AncillaryKind } from 'src/pricing/ancillary-prices';

/**
 * `dl_billing_ancillary_unpriced_total`, counted when the transaction that metered the quantity
 * commits: what a transaction adds waits on its query runner, a rolled-back attempt (a deadlock
 * retried by `inTransaction`) drops it, so a retried transaction counts once. A TypeORM subscriber to
 * the data source's transaction events (the outermost commit or rollback; savepoints are ignored).
 */
@Injectable()
export class UnpricedCounter implements EntitySubscriberInterface, OnModuleInit {
  private readonly pending = new WeakMap<QueryRunner, { kind: AncillaryKind; quantity: bigint }[]>();

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    this.ds.subscribers.push(this);
  }

  /** Unpriced quantity metered in `em`'s transaction (at once outside one). A counter only grows: a correction downwards is not subtracted; the statement has the exact figure. */
  add(em: EntityManager, kind: AncillaryKind, quantity: bigint): void {
    if (quantity <= 0n) return;
    const runner = em.queryRunner;
    if (!runner?.isTransactionActive) return this.count(kind, quantity);
    const list = this.pending.get(runner) ?? [];
    list.push({ kind, quantity });
    this.pending.set(runner, list);
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    const runner = event.queryRunner;
    if (runner.isTransactionActive) return;
    for (const u of this.pending.get(runner) ?? []) this.count(u.kind, u.quantity);
    this.pending.delete(runner);
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.pending.delete(event.queryRunner);
  }

  private count(kind: AncillaryKind, quantity: bigint): void {
    this.metrics.ancillaryUnpriced.inc({ kind, unit: UNIT_OF[kind] }, Number(quantityMicros(kind, quantity)) / 1e6);
  }
}
