import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { chargeFor } from '../../src/pricing/charges';
import { buildSession, type MeteredEvent } from '../../src/metering/core/sessions';
import { formatCredits, parseCredits } from '../../src/common/money';
import { SMALL } from '../support/accounts';
import { serviceTestEnv, uid } from '../support/app';
import { eventually, produce } from '../support/kafka';
import { plannedHistory } from '../support/scenarios';
import { startService, type ServiceProcess } from '../support/service-process';
import { serviceFetch } from '../support/openapi-check';

const RUNTIMES = 1_000;
const EVENTS_PER_RUNTIME = 50; // 50,000 events
const ACCOUNTS = 10;
const FUNDS = '1000.000000';

describe('SIGKILL in the middle of a 50,000-event load', () => {
  const running: ServiceProcess[] = [];
  const db = new pg.Client({ connectionString: inject('databaseUrl') });

  afterAll(async () => {
    await Promise.all(running.map((s) => s.stop()));
    await db.end();
  });

  it('applies every charge exactly once after restart', { timeout: 300_000 }, async () => {
    await db.connect();
    const adminKey = `admin-${uid('k')}-crash-test`;
    const env = serviceTestEnv({ BILLING_ADMIN_API_KEY: adminKey, CRON_ENABLED: 'false' });
    const topics = { lifecycle: env.KAFKA_TOPIC_LIFECYCLE! };
    const first = await startService(env);
    running.push(first);
    const api = async (port: number, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await serviceFetch(`http://127.0.0.1:${port}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };

    const tag = uid('crash');
    const accounts = Array.from({ length: ACCOUNTS }, (_, i) => `${tag}_acc${i}`);
    for (const id of accounts) {
      expect((await api(first.port, 'POST', '/v1/accounts', { id, kind: 'user', plan: 'enterprise' })).status).toBe(201);
      expect(
        (
          await api(
            first.port,
            'POST',
            `/v1/admin/accounts/${id}/grants`,
            { credits: FUNDS, reason: 'load' },
            { 'idempotency-key': `${id}-funds` },
          )
        ).status,
      ).toBe(201);
    }
    const runtimeOf = (r: number) => `${tag}_rt${r}`;
    const accountOf = (r: number) => accounts[r % ACCOUNTS]!;
    for (let r = 0; r < RUNTIMES; r += 50) {
      const batch = Array.from({ length: Math.min(50, RUNTIMES - r) }, (_, i) => r + i);
      const results = await Promise.all(
        batch.map((i) =>
          api(first.port, 'POST', '/v1/reservations', { accountId: accountOf(i), runtimeId: runtimeOf(i), ...SMALL, minutes: 60 }),
        ),
      );
      expect(results.every((x) => x.status === 201)).toBe(true);
    }

    const t0 = Date.now() - 6 * 3600_000;
    const histories = Array.from({ length: RUNTIMES }, (_, r) => plannedHistory(1000 + r, EVENTS_PER_RUNTIME));
    const messages = histories.flatMap((history, r) =>
      history.map((e) => ({
        key: accountOf(r),
        value: {
          id: `${runtimeOf(r)}_e${e.n}`,
          type: e.type,
          occurredAt: new Date(t0 + e.offsetMs).toISOString(),
          accountId: accountOf(r),
          runtimeId: runtimeOf(r),
          seq: e.seq,
          data: e.data,
        },
      })),
    );
    expect(messages).toHaveLength(50_000);
    for (let i = 0; i < messages.length; i += 5_000) await produce(topics.lifecycle, messages.slice(i, i + 5_000));

    // Events applied: the stored ones and the heartbeats their runtimes counted.
    const applied = async () =>
      (await db.query(`SELECT coalesce(sum(events_count), 0)::int AS n FROM runtimes WHERE runtime_id LIKE $1`, [`${tag}_%`])).rows[0]
        .n as number;
    await eventually(async () => (await applied()) >= 5_000, 60_000, 'the load to be under way');
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    const atKill = await applied();
    expect(atKill).toBeLessThan(50_000);

    const second = await startService(env);
    running.push(second);
    await eventually(async () => (await applied()) === 50_000, 120_000, 'every event applied');

    // Expected charges, computed from the events alone.
    const expected = new Map<string, bigint>();
    histories.forEach((history, r) => {
      const events: MeteredEvent[] = history.map((e) => ({
        id: `e${e.n}`,
        type: e.type as MeteredEvent['type'],
        occurredAt: new Date(t0 + e.offsetMs),
        seq: e.seq,
      }));
      const session = buildSession(events.map((e, i) => ({ ...e, data: history[i]!.data })));
      const hold = 1_000_000n;
      const charge = session.status === 'launch_failed' ? 0n : chargeFor(1_000_000n, session.closedMs);
      expected.set(runtimeOf(r), charge < hold ? charge : hold);
    });
    await eventually(
      async () =>
        (
          await db.query(`SELECT count(*)::int AS n FROM runtimes WHERE runtime_id LIKE $1 AND status IN ('settled', 'voided')`, [
            `${tag}_%`,
          ])
        ).rows[0].n === RUNTIMES,
      60_000,
      'every runtime settled',
    );
    const actual = await db.query(`SELECT runtime_id, charged::text FROM runtimes WHERE runtime_id LIKE $1`, [`${tag}_%`]);
    const mismatches = actual.rows.filter((r: { runtime_id: string; charged: string }) => BigInt(r.charged) !== expected.get(r.runtime_id));
    expect(mismatches).toEqual([]);

    for (const id of accounts) {
      const charged = [...expected]
        .filter(([rt], i) => accountOf(Number(rt.slice(rt.lastIndexOf('_rt') + 3))) === id && i >= 0)
        .reduce((a, [, c]) => a + c, 0n);
      const wallet = await api(second.port, 'GET', `/v1/accounts/${id}/wallet`);
      expect(wallet.body).toMatchObject({ total: formatCredits(parseCredits(FUNDS)! - charged), held: '0.000000' });
    }
  });
});
