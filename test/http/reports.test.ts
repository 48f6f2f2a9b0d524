import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppOnFreshDatabase, uid, type FreshHarness } from '../support/app';
import { USAGE_GRAINS, USAGE_ROLLUPS } from '../../src/reports/usage-rollups';

const MIN = 60_000;
// A month of its own, so that the period holds only this file's data.
const T0 = new Date('2031-03-04T10:00:00.000Z');
const PERIOD = 'from=2031-03-01T00:00:00Z&to=2031-04-01T00:00:00Z';

describe('admin reports', () => {
  // A database of its own: another file's expiry sweep (its clock years ahead) would settle this file's running runtime.
  let h: FreshHarness;
  let admin: string;
  let cp: string;
  let reportsKey: string;
  const clock = new ManualClock(T0);
  let a: string;
  let b: string;

  const reserve = (
    accountId: string,
    runtimeId: string,
    env: { name: string; sizeClass: string } = SMALL.environment,
    userId = 'u1',
    minutes = 60,
  ) =>
    h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId, userId, variant: SMALL.variant, environment: env, minutes },
    });
  const events = async (list: unknown[]) => {
    const res = await h.request('POST', '/v1/events', { key: cp, body: list });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  };
  const report = async (path: string, key = reportsKey) => {
    const res = await h.request('GET', `/v1/reports/${path}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('reports', { clock });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
    reportsKey = await h.key('reports');
    a = await fundedAccount(h, admin, { credits: '100.000000' });
    b = await fundedAccount(h, admin, { credits: '50.000000' });

    // a: 30 minutes of small (0.5 credits), then 45 minutes of medium for another user (1.5 credits).
    await reserve(a, 'rt_a1');
    await reserve(a, 'rt_a2', { name: 'ml-medium', sizeClass: 'medium' }, 'u2');
    await events([lifecycle(a, 'rt_a1', 'runtime.started', T0, 1), lifecycle(a, 'rt_a2', 'runtime.started', T0, 1)]);
    await events([
      lifecycle(a, 'rt_a1', 'runtime.terminated', new Date(T0.getTime() + 30 * MIN), 9, { reason: 'user' }),
      lifecycle(a, 'rt_a2', 'runtime.terminated', new Date(T0.getTime() + 45 * MIN), 9, { reason: 'user' }),
    ]);
    // A late pause/resume of rt_a1 after its settlement: corrected down to 20 minutes (a refund of 10 minutes).
    clock.advance(2 * 60 * MIN);
    await events([
      lifecycle(a, 'rt_a1', 'runtime.paused', new Date(T0.getTime() + 10 * MIN), 2),
      lifecycle(a, 'rt_a1', 'runtime.resumed', new Date(T0.getTime() + 20 * MIN), 3),
    ]);

    // b: a runtime that never sends runtime.terminated: told to terminate, then settled by the sweeper at its
    // hold (10 minutes), then corrected by a late runtime.terminated at 6 minutes.
    const start = clock.now();
    await reserve(b, 'rt_b1', SMALL.environment, 'u9', 10);
    await events([lifecycle(b, 'rt_b1', 'runtime.started', start, 1)]);
    clock.advance(11 * MIN);
    await events([lifecycle(b, 'rt_b1', 'runtime.heartbeat', clock.now(), 2)]);
    await h.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin });
    clock.advance(h.config.metering.settleGraceMs + MIN);
    const swept = await h.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin });
    expect(swept.body.result.forcedSettlements).toBeGreaterThanOrEqual(1);
    const [forced] = await h.ds.query(`SELECT charged::text, settlement FROM runtimes WHERE runtime_id = 'rt_b1'`);
    expect(forced).toEqual({ charged: '166667', settlement: 'forced_reservation_expired' });
    await events([lifecycle(b, 'rt_b1', 'runtime.terminated', new Date(start.getTime() + 6 * MIN), 3, { reason: 'user' })]);

    // b: a running runtime stopped by a spend limit lowered below what is spent.
    await reserve(b, 'rt_b2', SMALL.environment, 'u9', 10);
    await events([lifecycle(b, 'rt_b2', 'runtime.started', clock.now(), 1)]);
    const limit = await h.request('PUT', `/v1/accounts/${b}/spend-limit`, {
      key: admin,
      body: { credits: '0.100000', period: 'month', thresholds: [50, 100] },
    });
    expect(limit.status, JSON.stringify(limit.body)).toBe(200);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('keeps the usage rollups equal to the settled charges, after corrections and forced settlements', async () => {
    const [runtimes] = await h.ds.query(
      `SELECT count(*) FILTER (WHERE status = 'settled')::int AS n, coalesce(sum(closed_ms) FILTER (WHERE status = 'settled'), 0)::text AS ms,
              sum(charged)::text AS credits FROM runtimes WHERE account_id = ANY($1)`,
      [[a, b]],
    );
    // Every rollup table, in total and bucket by bucket: the settled runtimes and their running time grouped
    // by the hour, day or month of their first settlement, and their credits by that of the ledger
    // transactions that charged them (settlements and corrections, as the statement dates them), with
    // environment and user where the table has them.
    for (const level of Object.values(USAGE_ROLLUPS)) {
      for (const grain of USAGE_GRAINS) {
        const table = level[grain];
        const [total] = await h.ds.query(
          `SELECT sum(runtimes)::int AS n, sum(running_ms)::text AS ms, sum(credits)::text AS credits FROM ${table} WHERE account_id = ANY($1)`,
          [[a, b]],
        );
        expect(total, table).toEqual(runtimes);
        const bucket = (column: string) =>
          grain === 'hour'
            ? `date_trunc('hour', ${column} AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'`
            : `date_trunc('${grain}', ${column} AT TIME ZONE 'UTC')::date`;
        const keys = level.keys.map((k) =>
          k === 'environment' ? `coalesce(r.environment->>'name', '')` : k === 'user_id' ? `coalesce(r.user_id, '')` : `r.${k}`,
        );
        const expected = await h.ds.query(
          `SELECT ${keys.map((_, i) => `k${i}`).join(', ')}, at::text AS at, sum(runtimes)::text AS runtimes, sum(ms)::text AS ms, sum(credits)::text AS credits
           FROM (SELECT ${keys.map((k, i) => `${k} AS k${i}`).join(', ')}, ${bucket('r.settled_at')} AS at,
                        (r.status = 'settled')::int AS runtimes, CASE WHEN r.status = 'settled' THEN r.closed_ms ELSE 0 END AS ms, 0 AS credits
                 FROM runtimes r WHERE r.account_id = ANY($1) AND r.settled_at IS NOT NULL
                 UNION ALL
                 SELECT ${keys.map((k, i) => `${k} AS k${i}`).join(', ')}, ${bucket('t.created_at')}, 0, 0, e.amount
                 FROM runtimes r JOIN ledger_transactions t ON t.hold_id = r.hold_id
                 JOIN ledger_entries e ON e.transaction_id = t.id AND e.ledger_account = 'consumption'
                 WHERE r.account_id = ANY($1)) x
           GROUP BY ${keys.map((_, i) => `k${i}`).join(', ')}, at
           HAVING sum(credits) <> 0 OR sum(runtimes) <> 0 OR sum(ms) <> 0 ORDER BY 1, 2, 3, 4`,
          [[a, b]],
        );
        const found = await h.ds.query(
          `SELECT ${level.keys.map((k, i) => `${k} AS k${i}`).join(', ')}, ${grain}::text AS at, runtimes::text, running_ms::text AS ms, credits::text
           FROM ${table} WHERE account_id = ANY($1) AND (runtimes <> 0 OR running_ms <> 0 OR credits <> 0) ORDER BY 1, 2, 3, 4`,
          [[a, b]],
        );
        expect(found, table).toEqual(expected);
      }
    }
    // 20 minutes small + 45 minutes medium + 6 minutes small.
    expect(runtimes).toMatchObject({ n: 3, credits: String(333334 + 1_500_000 + 100_000) });
    const perRuntime = await h.ds.query(`SELECT runtime_id, charged::text FROM runtimes WHERE account_id = ANY($1) ORDER BY runtime_id`, [
      [a, b],
    ]);
    expect(perRuntime).toEqual([
      { runtime_id: 'rt_a1', charged: '333334' },
      { runtime_id: 'rt_a2', charged: '1500000' },
      { runtime_id: 'rt_b1', charged: '100000' },
      { runtime_id: 'rt_b2', charged: '0' },
    ]);
  });

  it('reports usage by account, environment, day and user, over whole UTC hours', async () => {
    const byAccount = await report(`usage?${PERIOD}`);
    expect(byAccount.totals).toEqual({ runtimes: 3, seconds: 20 * 60 + 45 * 60 + 6 * 60, credits: '1.933334' });
    expect(byAccount.items).toEqual(
      expect.arrayContaining([
        { account: a, runtimes: 2, seconds: 65 * 60, credits: '1.833334' },
        { account: b, runtimes: 1, seconds: 6 * 60, credits: '0.100000' },
      ]),
    );
    const byEnv = await report(`usage?${PERIOD}&groupBy=environment`);
    expect(byEnv.items).toEqual([
      { environment: 'ml-medium', runtimes: 1, seconds: 2700, credits: '1.500000' },
      { environment: 'python-simple', runtimes: 2, seconds: 1560, credits: '0.433334' },
    ]);
    const byDay = await report(`usage?${PERIOD}&groupBy=day`);
    expect(byDay.items).toEqual([{ day: '2031-03-04', runtimes: 3, seconds: 4260, credits: '1.933334' }]);
    const byUser = await report(`usage?${PERIOD}&groupBy=user`);
    expect(byUser.items.find((i: { user: string }) => i.user === 'u2')).toEqual({
      account: a,
      user: 'u2',
      runtimes: 1,
      seconds: 2700,
      credits: '1.500000',
    });
    // Partial days read the hourly rollups: rt_a1 and rt_a2 settled in the 10:00 hour (their corrected running
    // time counted there), rt_b1 in a later one; rt_a1's correction (−0.166666) is posted two hours later, in
    // its own hour, as on the ledger.
    const hour = await report('usage?from=2031-03-04T10:00:00Z&to=2031-03-04T11:00:00Z');
    expect(hour.totals).toEqual({ runtimes: 2, seconds: 65 * 60, credits: '2.000000' });
    const correction = await report('usage?from=2031-03-04T12:00:00Z&to=2031-03-04T13:00:00Z');
    expect(correction.items.find((i: { account: string }) => i.account === a)).toEqual({
      account: a,
      runtimes: 0,
      seconds: 0,
      credits: '-0.166666',
    });
    const across = await report('usage?from=2031-03-03T05:00:00Z&to=2031-03-05T03:00:00Z&groupBy=day');
    expect(across.items).toEqual([{ day: '2031-03-04', runtimes: 3, seconds: 4260, credits: '1.933334' }]);
    const twoMonths = await report('usage?from=2031-02-27T22:00:00Z&to=2031-05-02T01:00:00Z&groupBy=environment');
    expect(twoMonths.totals).toEqual(byAccount.totals);
    const before = await report('usage?from=2031-03-03T05:00:00Z&to=2031-03-04T10:00:00Z');
    expect(before.totals.runtimes).toBe(0);
    // Another month: nothing.
    const empty = await report('usage?from=2031-05-01T00:00:00Z&to=2031-06-01T00:00:00Z');
    expect(empty).toMatchObject({ items: [], totals: { runtimes: 0, credits: '0.000000' } });
  });

  it('answers in CSV with ?format=csv or Accept: text/csv', async () => {
    const viaQuery = await h.request('GET', `/v1/reports/usage?${PERIOD}&groupBy=environment&format=csv`, { key: reportsKey });
    expect(viaQuery.status).toBe(200);
    expect(viaQuery.headers['content-type']).toMatch(/^text\/csv/);
    expect(viaQuery.headers['content-disposition']).toContain('usage_2031-03-01_2031-04-01.csv');
    expect(viaQuery.body).toBe('environment,runtimes,seconds,credits\r\nml-medium,1,2700,1.500000\r\npython-simple,2,1560,0.433334\r\n');
    const viaAccept = await h.request('GET', `/v1/reports/credits?${PERIOD}&groupBy=total`, {
      key: reportsKey,
      headers: { accept: 'text/csv' },
    });
    expect(viaAccept.headers['content-type']).toMatch(/^text\/csv/);
    expect(String(viaAccept.body).split('\r\n')[0]).toBe('granted,topUps,clawedBack,consumed,refunded,expired,net');
  });

  it('adds up the credits flow with the ledger entries and the wallet columns', async () => {
    const credits = await report(`credits?${PERIOD}&groupBy=account`);
    const [ledger] = await h.ds.query(
      `SELECT coalesce(-sum(e.amount) FILTER (WHERE e.ledger_account = 'issued'), 0)::text AS issued,
              coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'consumption'), 0)::text AS consumption,
              coalesce(sum(e.amount) FILTER (WHERE e.ledger_account = 'expired'), 0)::text AS expired
       FROM ledger_transactions t JOIN ledger_entries e ON e.transaction_id = t.id
       WHERE t.created_at >= '2031-03-01' AND t.created_at < '2031-04-01'`,
    );
    const micros = (s: string) => BigInt(s.replace('.', ''));
    const t = credits.totals;
    expect(micros(t.granted) + micros(t.topUps) - micros(t.clawedBack)).toBe(BigInt(ledger.issued));
    expect(micros(t.consumed) - micros(t.refunded)).toBe(BigInt(ledger.consumption));
    expect(micros(t.expired)).toBe(BigInt(ledger.expired));
    // Everything these wallets ever did happened in the period: the report equals their stored columns.
    for (const id of [a, b]) {
      const [w] = await h.ds.query(`SELECT issued::text, consumed::text, expired::text FROM wallets WHERE account_id = $1`, [id]);
      const row = credits.items.find((i: { account: string }) => i.account === id);
      expect(micros(row.granted) + micros(row.topUps) - micros(row.clawedBack)).toBe(-BigInt(w.issued));
      expect(micros(row.consumed) - micros(row.refunded)).toBe(BigInt(w.consumed));
      expect(micros(row.expired)).toBe(BigInt(w.expired));
    }
    const rowA = credits.items.find((i: { account: string }) => i.account === a);
    // 0.5 settled then 0.166666 refunded by the correction.
    expect(rowA).toMatchObject({ granted: '100.000000', consumed: '2.000000', refunded: '0.166666' });
    const rowB = credits.items.find((i: { account: string }) => i.account === b);
    expect(rowB).toMatchObject({ granted: '50.000000', consumed: '0.166667', refunded: '0.066667' });
    const total = await report(`credits?${PERIOD}&groupBy=total`);
    expect(total.items).toEqual([total.totals]);
    const byDay = await report(`credits?${PERIOD}`);
    expect(byDay.items.map((i: { day: string }) => i.day)).toEqual(['2031-03-04']);
  });

  it('lists spend-limit terminations and top consumers', async () => {
    // Through the typed client: the query parameters and the report's shape are the document's.
    const api = h.client(reportsKey);
    const period = { from: '2031-03-01T00:00:00Z', to: '2031-04-01T00:00:00Z' };
    const { data: events } = await api.GET('/v1/reports/spend-limits', { params: { query: period } });
    if (!events || typeof events === 'string') throw new Error('no JSON spend-limits report');
    expect(events.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'termination', account: b, user: 'u9', event: 'spend_limit', runtime: 'rt_b2' }),
      ]),
    );
    expect(events.items).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ type: 'termination', account: b, event: 'reservation_expired', runtime: 'rt_b1' }),
      ]),
    );
    expect(events.totals?.['termination:spend_limit']).toBe(1);
    const top = await api.GET('/v1/reports/top-consumers', { params: { query: { ...period, limit: 1 } } });
    if (!top.data || typeof top.data === 'string') throw new Error('no JSON top-consumers report');
    expect(top.data.items).toEqual([expect.objectContaining({ rank: 1, account: a, credits: '1.833334', plan: 'enterprise' })]);
    const csv = await api.GET('/v1/reports/top-consumers', { params: { query: { ...period, limit: 1, format: 'csv' } }, parseAs: 'text' });
    expect(csv.response.headers.get('content-type')).toContain('text/csv');
    expect(String(csv.data).split('\r\n')[0]).toContain('account');
  });

  it('reports Team seats against the Stripe quantity, and the drift as a reconciliation discrepancy', async () => {
    const team = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    await h.ds.query(
      `INSERT INTO account_members (account_id, user_id, active, changed_at, change_id)
       SELECT $1, 'user' || i, i <= 3, now(), 'c' || i FROM generate_series(1, 4) i`,
      [team],
    );
    await h.ds.query(
      `INSERT INTO stripe_subscriptions (account_id, customer_id, subscription_id, status, seat_quantity) VALUES ($1, 'cus_1', $2, 'active', 2)`,
      [team, uid('sub')],
    );
    const seats = await report(`seats?${PERIOD}`);
    const row = seats.items.find((i: { account: string }) => i.account === team);
    expect(row).toMatchObject({
      seats: 3,
      stripeQuantity: 2,
      drift: -1,
      subscriptionStatus: 'active',
      expectedMrrCents: 4900 + 3 * 1500,
      stripeMrrCents: 4900 + 2 * 1500,
    });
    // Other test files create Team accounts in the same database: the totals are the sum of the rows.
    const sum = (k: string) => seats.items.reduce((acc: number, i: Record<string, number>) => acc + (i[k] ?? 0), 0);
    expect(seats.totals).toMatchObject({ seats: sum('seats'), stripeQuantity: sum('stripeQuantity') });
    const rec = await report(`reconciliation?${PERIOD}`);
    expect(rec.items.filter((i: { account: string }) => i.account === team)).toEqual([
      expect.objectContaining({ kind: 'open_drift', account: team, stripeQuantity: 2, activeSeats: 3, difference: -1 }),
    ]);
  });

  it('needs the reports or admin scope, and whole hours for usage', async () => {
    expect((await h.request('GET', `/v1/reports/usage?${PERIOD}`, { key: cp })).status).toBe(403);
    expect((await h.request('GET', `/v1/reports/usage?${PERIOD}`)).status).toBe(401);
    expect((await h.request('GET', `/v1/reports/usage?${PERIOD}`, { key: admin })).status).toBe(200);
    const bad = await h.request('GET', '/v1/reports/usage?from=2031-03-01T00:30:00Z&to=2031-03-01T00:00:00Z&groupBy=nope', {
      key: reportsKey,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.findings.map((f: { field: string }) => f.field)).toEqual(['groupBy']);
    const cut = await h.request('GET', '/v1/reports/usage?from=2031-03-01T00:30:00Z&to=2031-03-01T00:00:00Z', { key: reportsKey });
    expect(cut.body.error.findings.map((f: { field: string }) => f.field).sort()).toEqual(['from', 'to']);
  });

  it('gives totals of seconds that are the sum of the rows (each rounded down), in the report and in the account usage', async () => {
    // Two runtimes of 61.5 s each, in two environments, in a month of their own (May).
    const may = new Date('2031-05-10T10:00:00.000Z');
    clock.set(may);
    const c = await fundedAccount(h, admin, { credits: '10.000000' });
    for (const [id, env] of [
      ['rt_c1', SMALL.environment],
      ['rt_c2', { name: 'ml-medium', sizeClass: 'medium' }],
    ] as const) {
      expect((await reserve(c, id, env)).status).toBe(201);
      await events([
        lifecycle(c, id, 'runtime.started', may, 1),
        lifecycle(c, id, 'runtime.terminated', new Date(may.getTime() + 61_500), 2, { reason: 'user' }),
      ]);
    }
    const byEnv = await report('usage?from=2031-05-10T00:00:00Z&to=2031-05-11T00:00:00Z&groupBy=environment');
    expect(byEnv.items.map((i: { seconds: number }) => i.seconds)).toEqual([61, 61]);
    expect(byEnv.totals.seconds).toBe(122);
    const own = await h.request('GET', `/v1/accounts/${c}/usage?from=2031-05-01T00:00:00Z&to=2031-06-01T00:00:00Z&groupBy=runtime`, {
      key: admin,
    });
    expect(own.body.items.map((i: { seconds: number }) => i.seconds)).toEqual([61, 61]);
    expect(own.body.total).toMatchObject({ runtimes: 2, seconds: 122 });
  });
});
