import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { runCli } from '../support/cli';
import type { Workload } from './workload';

/** Runs `work` with a connection of its own: the server may have been restarted since the last one. */
export async function withDb<T>(url: string, work: (db: pg.Client) => Promise<T>): Promise<T> {
  const db = new pg.Client({ connectionString: url });
  db.on('error', () => undefined);
  await db.connect();
  try {
    return await work(db);
  } finally {
    await db.end().catch(() => undefined);
  }
}

/**
 * What must hold at any moment, even straight after a crash: every ledger entry sums to zero with
 * the others, every stored balance equals its entries (the operators' `ledger reconcile`), and for
 * the load's runtimes, each event was counted exactly once: each stored event, and each heartbeat
 * (counted by its runtime, not stored) — the event rows and the runtimes' counters are written by the
 * same transaction.
 */
export async function checkAtAnyMoment(url: string, build: string, workload?: Workload): Promise<string[]> {
  const problems: string[] = [];
  await withDb(url, async (db) => {
    const [total] = (await db.query(`SELECT coalesce(sum(amount), 0)::text AS total FROM ledger_entries`)).rows;
    if (total.total !== '0') problems.push(`ledger entries sum to ${total.total}`);
    if (workload) {
      const [counted] = (
        await db.query(
          `SELECT (SELECT count(*) FROM runtime_events WHERE runtime_id LIKE $1)::int + (SELECT coalesce(sum(heartbeats), 0) FROM runtimes WHERE runtime_id LIKE $1)::int AS stored,
                  (SELECT coalesce(sum(events_count), 0) FROM runtimes WHERE runtime_id LIKE $1)::int AS counted`,
          [`${workload.tag}_%`],
        )
      ).rows;
      if (counted.stored !== counted.counted) {
        problems.push(`${counted.stored} events stored or heartbeats counted but ${counted.counted} counted by their runtimes`);
      }
    }
  });
  const reconcile = await runCli(build, ['ledger', 'reconcile'], { DATABASE_URL: url, KAFKA_BROKERS: '', LOG_LEVEL: 'error' });
  if (reconcile.code !== 0) {
    problems.push(`ledger reconcile exited ${reconcile.code}: ${reconcile.stdout}${reconcile.stderr}`.slice(0, 2_000));
  }
  return problems;
}

/**
 * What must hold once the load has been consumed: every event stored and applied once, every
 * runtime charged what its events say, each wallet down by exactly its runtimes' charges with
 * nothing left held, and no hold left open.
 */
export async function checkSettled(url: string, workload: Workload): Promise<string[]> {
  const problems: string[] = [];
  const expected = workload.expectedCharges();
  await withDb(url, async (db) => {
    const like = `${workload.tag}_%`;
    const [events] = (
      await db.query(
        `SELECT (SELECT count(*) FROM runtime_events WHERE runtime_id LIKE $1)::int + (SELECT coalesce(sum(heartbeats), 0) FROM runtimes WHERE runtime_id LIKE $1)::int AS stored,
                (SELECT coalesce(sum(events_count), 0) FROM runtimes WHERE runtime_id LIKE $1)::int AS counted`,
        [like],
      )
    ).rows;
    if (events.stored !== workload.eventCount || events.counted !== workload.eventCount) {
      problems.push(`${workload.eventCount} events sent, ${events.stored} stored, ${events.counted} counted by their runtimes`);
    }
    const runtimes = (await db.query(`SELECT runtime_id, status, charged::text, hold_id FROM runtimes WHERE runtime_id LIKE $1`, [like]))
      .rows as {
      runtime_id: string;
      status: string;
      charged: string;
      hold_id: string | null;
    }[];
    if (runtimes.length !== expected.size) problems.push(`${expected.size} runtimes expected, ${runtimes.length} found`);
    const wrong = runtimes.filter((r) => BigInt(r.charged) !== expected.get(r.runtime_id) || !['settled', 'voided'].includes(r.status));
    for (const r of wrong.slice(0, 10)) {
      problems.push(`runtime ${r.runtime_id}: ${r.status}, charged ${r.charged}, expected ${String(expected.get(r.runtime_id))}`);
    }
    if (wrong.length > 10) problems.push(`… and ${wrong.length - 10} more runtimes`);

    const open = (await db.query(`SELECT id FROM holds WHERE status = 'reserved' AND account_id LIKE $1`, [like])).rows;
    if (open.length > 0) problems.push(`${open.length} holds still reserved, e.g. ${String(open[0].id)}`);
    const settlements = (
      await db.query(
        `SELECT hold_id, count(*)::int AS n FROM ledger_transactions
         WHERE account_id LIKE $1 AND kind IN ('settlement', 'void', 'release') GROUP BY hold_id HAVING count(*) > 1`,
        [like],
      )
    ).rows;
    if (settlements.length > 0) problems.push(`${settlements.length} holds resolved more than once`);

    for (const account of workload.accounts) {
      const charged = workload.runtimes.filter((rt) => rt.accountId === account).reduce((sum, rt) => sum + expected.get(rt.id)!, 0n);
      const [w] = (
        await db.query(
          `SELECT grants_balance::text AS grants, holds_balance::text AS held, consumed::text FROM wallets WHERE account_id = $1`,
          [account],
        )
      ).rows;
      const want = { grants: String(workload.fundsPerAccount() - charged), held: '0', consumed: String(charged) };
      if (!w || w.grants !== want.grants || w.held !== want.held || w.consumed !== want.consumed) {
        problems.push(`wallet ${account}: ${JSON.stringify(w)}, expected ${JSON.stringify(want)}`);
      }
    }
  });
  return problems;
}

/** Reservations that never started, aged past their start window, as if 15 minutes had gone by. */
export async function ageNeverStarted(url: string, workload: Workload): Promise<void> {
  await withDb(url, (db) =>
    db.query(`UPDATE runtimes SET start_deadline = now() - interval '1 second' WHERE runtime_id = ANY($1)`, [workload.neverStarted]),
  );
}

/** How many of the topic's messages the group has not committed yet (all partitions). */
export async function consumerLag(brokers: string, groupId: string, topic: string): Promise<number> {
  const admin = new Kafka({ clientId: 'faults-lag', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const [ends, [committed]] = await Promise.all([admin.fetchTopicOffsets(topic), admin.fetchOffsets({ groupId, topics: [topic] })]);
    let lag = 0;
    for (const end of ends) {
      const at = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
      lag += Number(end.high) - Math.max(Number(at), Number(end.low));
    }
    return lag;
  } finally {
    await admin.disconnect();
  }
}
