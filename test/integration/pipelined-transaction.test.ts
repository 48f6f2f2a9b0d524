import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { DataSource } from 'typeorm';
import { inOneRoundTrip, inTransactionFrom, PipelinedSession, poolOf, type Call } from '../../src/common/database/pipelined-transaction';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

// A pipelined transaction sends its statements without waiting for each answer (PipelinedSession: BEGIN
// with the first ones, COMMIT with the last; inTransactionFrom: the first ones in one round trip of a
// TypeORM transaction). These tests try to break what callers rely on: all or nothing, a deadlock run
// again from the start, values passed as they are, and a pool that gets every connection back with no
// transaction left open.
describe('pipelined transactions', () => {
  let db: FreshDatabase;
  let ds: DataSource;

  const lockRow = (id: string): Call => ({
    statement: { name: 'pipelined_test_lock_v1', text: `SELECT id, v FROM pipelined_probe WHERE id = $1 FOR UPDATE` },
    values: [id],
  });
  const failing: Call = { statement: { name: 'pipelined_test_fail_v1', text: `SELECT 1 / $1::int AS x` }, values: [0] };

  const values = async (): Promise<Record<string, number>> =>
    Object.fromEntries(
      ((await ds.query(`SELECT id, v FROM pipelined_probe ORDER BY id`)) as { id: string; v: number }[]).map((r) => [r.id, r.v]),
    );

  /** Sessions of this database still inside a transaction (none once every caller has finished). */
  const openTransactions = async (): Promise<number> => {
    const [row] = (
      await db.admin.query(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND state LIKE 'idle in transaction%'`, [
        db.name,
      ])
    ).rows as { n: number }[];
    return row!.n;
  };

  const expectPoolSettled = async (): Promise<void> => {
    const pool = poolOf(ds);
    expect(pool.totalCount - pool.idleCount).toBe(0);
    expect(await openTransactions()).toBe(0);
  };

  beforeAll(async () => {
    db = await freshDatabase('pipelined', 4);
    ds = db.ds;
    await ds.query(`CREATE TABLE pipelined_probe (id text PRIMARY KEY, v int NOT NULL)`);
  });
  afterAll(() => db?.drop());
  beforeEach(async () => {
    await ds.query(`TRUNCATE pipelined_probe`);
    await ds.query(`INSERT INTO pipelined_probe (id, v) VALUES ('a', 0), ('b', 0)`);
  });

  it('gives the work the first statements’ rows, and commits what both wrote', async () => {
    const result = await inTransactionFrom(ds, [lockRow('a'), lockRow('b')], async (em, rows) => {
      expect(rows).toEqual([[{ id: 'a', v: 0 }], [{ id: 'b', v: 0 }]]);
      await em.query(`UPDATE pipelined_probe SET v = v + 1 WHERE id IN ('a', 'b')`);
      // The work can pipeline too: the runner counts as in a transaction.
      const [[read]] = (await inOneRoundTrip(em, [lockRow('a')])) as [[{ v: number }]];
      return read.v;
    });
    expect(result).toBe(1);
    expect(await values()).toEqual({ a: 1, b: 1 });
    await expectPoolSettled();
  });

  it('rolls back everything when the work throws, and gives its error to the caller', async () => {
    await expect(
      inTransactionFrom(ds, [lockRow('a')], async (em) => {
        await em.query(`UPDATE pipelined_probe SET v = 10 WHERE id = 'a'`);
        await em.query(`INSERT INTO pipelined_probe (id, v) VALUES ('c', 1)`);
        throw new Error('refused by the work');
      }),
    ).rejects.toThrow('refused by the work');
    expect(await values()).toEqual({ a: 0, b: 0 });
    await expectPoolSettled();
  });

  it('rejects when a first statement fails, runs no work, and leaves the connection usable', async () => {
    let ran = false;
    await expect(
      inTransactionFrom(ds, [lockRow('a'), failing], async () => {
        ran = true;
      }),
    ).rejects.toThrow(/division by zero/);
    expect(ran).toBe(false);
    await expectPoolSettled();
    // Every pooled connection still works in a transaction of its own (none was left aborted).
    const pool = poolOf(ds);
    const ok = await Promise.all(
      Array.from({ length: pool.totalCount }, () => inTransactionFrom(ds, [lockRow('b')], async (_em, rows) => rows[0]?.length)),
    );
    expect(ok.every((n) => n === 1)).toBe(true);
    await expectPoolSettled();
  });

  it('runs a transaction chosen as a deadlock victim again from its BEGIN, so both commit once', async () => {
    // Two transactions take the rows in opposite orders: each locks its first row with BEGIN, waits
    // until the other has too, then asks for the other's row. PostgreSQL aborts one (40P01); it is
    // run again from the start (first statements included) once the winner has committed.
    let bothLocked: () => void = () => undefined;
    let lockedCount = 0;
    const barrier = new Promise<void>((resolve) => (bothLocked = resolve));
    const attempts = { ab: 0, ba: 0 };
    const seen: Record<string, number[]> = { ab: [], ba: [] };
    const transfer = (first: 'a' | 'b', second: 'a' | 'b', label: 'ab' | 'ba'): Promise<string> =>
      inTransactionFrom(ds, [lockRow(first)], async (em, rows) => {
        attempts[label]++;
        seen[label]!.push((rows[0]?.[0] as { v: number }).v);
        if (++lockedCount === 2) bothLocked();
        await barrier;
        await em.query(`SELECT 1 FROM pipelined_probe WHERE id = $1 FOR UPDATE`, [second]);
        await em.query(`UPDATE pipelined_probe SET v = v + 1 WHERE id IN ($1, $2)`, [first, second]);
        return label;
      });
    const done = await Promise.all([transfer('a', 'b', 'ab'), transfer('b', 'a', 'ba')]);
    expect(done).toEqual(['ab', 'ba']);
    // One of them ran twice; the second run read, with its BEGIN, the row the winner had committed.
    expect(attempts.ab + attempts.ba).toBe(3);
    const victim = attempts.ab === 2 ? 'ab' : 'ba';
    expect(seen[victim]).toEqual([0, 1]);
    expect(await values()).toEqual({ a: 2, b: 2 });
    await expectPoolSettled();
  });

  it("runs on pg's pipeline mode, which the pinned pg version provides", async () => {
    // Without it pg would still be correct, one statement per round trip: a pg without the option must fail here.
    const client = await poolOf(ds).connect();
    try {
      expect(client.pipeline).toBe(true);
    } finally {
      client.release();
    }
  });

  it('passes every value to PostgreSQL as it is (bound by the driver, nothing quoted by hand)', async () => {
    const texts = [
      "it's",
      "'; DROP TABLE pipelined_probe; --",
      "back\\slash \\' both",
      '{"a":"\\"quoted\\""}',
      'ünïcödé 🎉 \u2028',
      "E'x'",
    ];
    const echo: Call = {
      statement: { name: 'pipelined_test_echo_v1', text: `SELECT $1::text AS t, $2::text[] AS a, $3::jsonb AS j, $4::bigint::text AS n` },
      values: [texts[0], texts, JSON.stringify({ texts }), 9_007_199_254_740_993n],
    };
    const session = await PipelinedSession.begin(poolOf(ds), [echo]);
    const [[inside]] = (await session.commit([echo])) as [[Record<string, unknown>]];
    expect(session.rows).toEqual([inside]);
    expect(inside).toEqual({ t: texts[0], a: texts, j: { texts }, n: '9007199254740993' });
    const [[viaTypeOrm]] = await inTransactionFrom(ds, [echo], async (_em, rows) => rows as [[Record<string, unknown>]]);
    expect(viaTypeOrm).toEqual(inside);
    expect(await values()).toEqual({ a: 0, b: 0 });
    await expectPoolSettled();
  });

  it('refuses to pipeline outside a transaction', async () => {
    await expect(inOneRoundTrip(ds.manager, [lockRow('a')])).rejects.toThrow('inOneRoundTrip runs in a transaction');
  });
});
