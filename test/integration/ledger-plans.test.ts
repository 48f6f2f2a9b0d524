import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { AuditService } from '../../src/audit/audit.service';
import { dataSourceOptions } from '../../src/common/database/data-source';
import { openDataSource } from '../../src/common/database/database.module';
import { SystemClock } from '../../src/infra/clock/clock';
import { LedgerService } from '../../src/ledger/ledger.service';
import { inject } from 'vitest';

// The ledger's hot statements keep the generic plan made at their first execution on a connection.
// Made on a young database (tiny tables, statistics saying so), that plan must still find rows by key: a sequential scan
// kept for the connection's life read every grant on every write once the tables had grown.
describe('ledger plans on a fresh database', () => {
  const name = `billing_plans_${process.pid}_${Date.now()}`;
  let admin: pg.Client;
  let ds: DataSource;

  beforeAll(async () => {
    const server = inject('databaseUrl');
    admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(server);
    url.pathname = `/${name}`;
    ds = await openDataSource(dataSourceOptions(url.toString(), 2));
  });
  afterAll(async () => {
    await ds?.destroy();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('plans the write statement as index lookups even when its tables were tiny at planning time', async () => {
    const clock = new SystemClock();
    const ledger = new LedgerService(ds, new AuditService(ds, clock), clock);
    await ds.query(`INSERT INTO accounts (id, kind, plan) VALUES ('acc_plans', 'user', 'enterprise')`);
    // A few rows, and statistics that say so (autovacuum's ANALYZE of a young database).
    await ledger.grantTx({ accountId: 'acc_plans', source: 'admin', amount: 1_000_000n, expiresAt: null, idempotencyKey: 'g0', reason: 'test', actor: 'test' });
    await ledger.createHoldTx({ accountId: 'acc_plans', holdId: 'hold_first', amount: 100_000n, reference: 'rt', idempotencyKey: 'h0' });
    await ledger.settleHoldTx({ holdId: 'hold_first', amount: 50_000n });
    await ds.query(`ANALYZE grants, holds, hold_allocations, wallets, ledger_transactions, ledger_entries`);
    const runner = ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      const em = runner.manager;
      await ledger.grant(em, { accountId: 'acc_plans', source: 'admin', amount: 5_000_000n, expiresAt: null, idempotencyKey: 'g1', reason: 'test', actor: 'test' });
      await ledger.createHold(em, { accountId: 'acc_plans', holdId: 'hold_plans', amount: 1_000_000n, reference: 'rt', idempotencyKey: 'h1' });
      await ledger.settleHold(em, { holdId: 'hold_plans', amount: 500_000n });
      // The plan this connection keeps for the write (every parameter NULL: EXPLAIN only plans it).
      const plan: { 'QUERY PLAN': string }[] = await runner.query(`EXPLAIN EXECUTE ledger_write_v2(${Array(29).fill('NULL').join(', ')})`);
      const text = plan.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(/Index Scan|Index Only Scan|Bitmap Index Scan/);
      expect(text).not.toMatch(/Seq Scan on (grants|holds|hold_allocations|wallets)/);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
  });
});
