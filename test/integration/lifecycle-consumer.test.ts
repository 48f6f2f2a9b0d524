import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { eventually, produce, readTopic } from '../support/kafka';

function event(runtimeId: string, type = 'runtime.heartbeat', seq = 1) {
  return {
    id: uid('evt'),
    type,
    occurredAt: new Date().toISOString(),
    accountId: 'acc_consumer',
    runtimeId,
    seq,
    data: {},
  };
}

async function eventsCount(h: Harness, runtimeId: string): Promise<number> {
  const rows: { events_count: number }[] = await h.ds.query('SELECT events_count FROM runtimes WHERE runtime_id = $1', [runtimeId]);
  return rows[0]?.events_count ?? 0;
}

describe('lifecycle consumer on the real broker', () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startApp({ kafka: true });
  });
  afterAll(() => h.close());

  it('audits what an event causes under the event id: a reservation on the fly, then the settlement', async () => {
    const admin = await h.key('admin');
    const cp = await h.key('control-plane');
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const reserved = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: reserved, ...SMALL } })).status).toBe(201);
    const onTheFly = uid('rt');
    const t = Date.now();
    const started = lifecycle(accountId, onTheFly, 'runtime.started', new Date(t - 120_000), 1, {
      environment: SMALL.environment,
      variant: SMALL.variant,
    });
    const terminated = lifecycle(accountId, reserved, 'runtime.terminated', new Date(t), 2, { reason: 'user' });
    const begun = lifecycle(accountId, reserved, 'runtime.started', new Date(t - 60_000), 1);
    await produce(
      h.config.topics.lifecycle,
      [started, begun, terminated].map((value) => ({ key: accountId, value })),
    );
    const rows = async (): Promise<{ action: string; correlation_id: string | null; reference: string | null }[]> =>
      h.ds.query(
        `SELECT action, correlation_id, coalesce(after->'hold'->>'reference', after->>'hold') AS reference FROM audit_log
         WHERE account_id = $1 AND action LIKE 'hold.%' ORDER BY id`,
        [accountId],
      );
    await eventually(async () => (await rows()).some((r) => r.action === 'hold.settled'), 30_000, 'the settlement');
    const found = await rows();
    expect(found.find((r) => r.action === 'hold.settled')?.correlation_id).toBe(terminated.id);
    expect(found.find((r) => r.action === 'hold.created' && r.reference === onTheFly)?.correlation_id).toBe(started.id);
  });

  it('parks poison messages in the dead-letter topic with their reason and applies the good ones after them', async () => {
    const runtimeId = uid('rt');
    const good = event(runtimeId);
    const topics = h.config.topics;
    await produce(topics.lifecycle, [
      { key: 'acc_consumer', value: 'this is not JSON' },
      { key: 'acc_consumer', value: { ...event(runtimeId), type: 'runtime.exploded' } },
      { key: 'acc_consumer', value: { id: uid('evt'), type: 'runtime.started' } },
      { key: 'acc_consumer', value: { ...event(runtimeId), seq: -1 } },
      { key: 'acc_consumer', value: { ...event(runtimeId), occurredAt: '9999-01-01T00:00:00.000Z' } },
      { key: 'acc_consumer', value: good },
    ]);

    await eventually(async () => (await eventsCount(h, runtimeId)) === 1, 30_000, 'the good event');
    const dlq = await readTopic(topics.lifecycleDlq, 5);
    expect(dlq).toHaveLength(5);
    const reasons = dlq.map((m) => m.headers['x-dlq-reason']);
    expect(reasons[0]).toMatch(/not JSON/);
    expect(reasons[1]).toMatch(/type/);
    expect(reasons[2]).toMatch(/occurredAt.*accountId.*runtimeId.*seq|accountId/);
    expect(reasons[3]).toMatch(/seq: must not be negative/);
    expect(reasons[4]).toMatch(/occurredAt/);
    expect(dlq.every((m) => m.headers['x-dlq-code'] === 'DL_BILLING_REQUEST_INVALID')).toBe(true);
    expect(dlq[0]?.value).toBe('this is not JSON');
    // The good event (a heartbeat: counted by its runtime, not stored) was applied, and nothing else.
    expect(await eventsCount(h, runtimeId)).toBe(1);
  });

  it("parks an event that names another account than its runtime's, and applies its neighbours", async () => {
    const runtimeId = uid('rt');
    const topics = h.config.topics;
    await produce(topics.lifecycle, [{ key: 'acc_consumer', value: event(runtimeId, 'runtime.heartbeat', 1) }]);
    await eventually(async () => (await eventsCount(h, runtimeId)) === 1, 30_000, 'the first event');
    const foreign = { ...event(runtimeId, 'runtime.paused', 2), accountId: 'acc_someone_else' };
    const next = event(runtimeId, 'runtime.heartbeat', 3);
    await produce(topics.lifecycle, [
      { key: 'acc_someone_else', value: foreign },
      { key: 'acc_consumer', value: next },
    ]);
    await eventually(async () => (await eventsCount(h, runtimeId)) === 2, 30_000, 'the neighbour');
    const dlq = (await readTopic(topics.lifecycleDlq, 6, 20_000, 1_000)).filter((m) => m.value.includes(foreign.id));
    expect(dlq).toHaveLength(1);
    expect(dlq[0]!.headers['x-dlq-code']).toBe('DL_BILLING_REQUEST_INVALID');
    expect(dlq[0]!.headers['x-dlq-reason']).toMatch(/accountId: runtime .* belongs to another account/);
    expect(JSON.parse(dlq[0]!.headers['x-dlq-findings']!)).toEqual([
      { field: 'accountId', message: `runtime ${runtimeId} belongs to another account` },
    ]);
    const stored: { id: string }[] = await h.ds.query('SELECT id FROM runtime_events WHERE runtime_id = $1 ORDER BY seq', [runtimeId]);
    expect(stored.map((e) => e.id)).not.toContain(foreign.id);
    const [row] = await h.ds.query('SELECT account_id, status FROM runtimes WHERE runtime_id = $1', [runtimeId]);
    expect(row.account_id).toBe('acc_consumer');
    expect(row.status).not.toBe('paused');
  });

  it('parks an event of a runtime whose month is archived, and applies its neighbours', async () => {
    // A runtime of March 2019, its month archived (as `cli events archive` leaves it; no test uses that month).
    const archived = uid('rt');
    await h.ds.query(
      `INSERT INTO runtimes (runtime_id, account_id, status, created_at) VALUES ($1, 'acc_consumer', 'settled', '2019-03-10T00:00:00Z')`,
      [archived],
    );
    await h.ds.query(
      `INSERT INTO event_month_archives (month, partition, runtimes) VALUES ('2019-03-01', 'runtime_events_2019_03', 1) ON CONFLICT DO NOTHING`,
    );
    const late = event(archived, 'runtime.paused', 9);
    const neighbour = uid('rt');
    const topics = h.config.topics;
    await produce(topics.lifecycle, [
      { key: 'acc_consumer', value: late },
      { key: 'acc_consumer', value: event(neighbour, 'runtime.heartbeat', 1) },
    ]);
    await eventually(async () => (await eventsCount(h, neighbour)) === 1, 30_000, 'the neighbour');
    const dlq = (await readTopic(topics.lifecycleDlq, 7, 20_000, 1_000)).filter((m) => m.value.includes(late.id));
    expect(dlq).toHaveLength(1);
    expect(dlq[0]!.headers['x-dlq-code']).toBe('DL_BILLING_REQUEST_INVALID');
    expect(JSON.parse(dlq[0]!.headers['x-dlq-findings']!)).toEqual([
      { field: 'runtimeId', message: `runtime ${archived} is of 2019-03, whose events are archived: it was settled for good` },
    ]);
    expect(await h.ds.query('SELECT id FROM runtime_events WHERE runtime_id = $1', [archived])).toEqual([]);
    expect((await h.ds.query('SELECT status FROM runtimes WHERE runtime_id = $1', [archived]))[0].status).toBe('settled');
  });

  it('applies a duplicated event id once, whether it comes twice from Kafka or again over HTTP', async () => {
    const runtimeId = uid('rt');
    const first = event(runtimeId, 'runtime.heartbeat', 1);
    const second = event(runtimeId, 'runtime.heartbeat', 2);
    await produce(h.config.topics.lifecycle, [
      { key: 'acc_consumer', value: first },
      { key: 'acc_consumer', value: first },
      { key: 'acc_consumer', value: second },
    ]);
    await eventually(async () => (await eventsCount(h, runtimeId)) >= 2, 30_000, 'both events');
    const key = await h.key('control-plane');
    const again = await h.request('POST', '/v1/events', { key, body: first });
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ accepted: 0, duplicates: 1 });
    await new Promise((r) => setTimeout(r, 500));
    expect(await eventsCount(h, runtimeId)).toBe(2);
  });

  it("keeps the first of two messages with one id in a chunk: a runtime.terminated reusing its start's id does not end the run", async () => {
    const admin = await h.key('admin');
    const cp = await h.key('control-plane');
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const runtimeId = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL } })).status).toBe(201);
    const t = Date.now() - 300_000;
    const started = lifecycle(accountId, runtimeId, 'runtime.started', new Date(t), 1);
    const sameId = {
      ...lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(t + 60_000), 2, { reason: 'user' }),
      id: started.id,
    };
    const terminated = lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(t + 120_000), 3, { reason: 'user' });
    await produce(
      h.config.topics.lifecycle,
      [started, sameId, terminated].map((value) => ({ key: accountId, value })),
    );
    const view = async () => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;
    await eventually(async () => (await view()).status === 'settled', 30_000, 'the settlement');
    expect(await view()).toMatchObject({ runningSeconds: 120, charged: '0.033334', released: '0.133333', terminationReason: 'user' });
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body).toMatchObject({
      total: '1.966666',
      held: '0.000000',
    });
  });

  it("applies the copy of an id that names the runtime's account and parks one naming another, in either order in a chunk", async () => {
    const admin = await h.key('admin');
    const cp = await h.key('control-plane');
    const topics = h.config.topics;
    for (const foreignFirst of [true, false]) {
      const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
      const runtimeId = uid('rt');
      expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL } })).status).toBe(201);
      const started = lifecycle(accountId, runtimeId, 'runtime.started', new Date(Date.now() - 60_000), 1);
      const foreign = { ...started, accountId: 'acc_someone_else' };
      const copies = foreignFirst ? [foreign, started] : [started, foreign];
      await produce(
        topics.lifecycle,
        copies.map((value) => ({ key: accountId, value })),
      );
      const view = async () => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;
      await eventually(async () => (await view()).status === 'running', 30_000, 'the start');
      expect((await view()).intervals).toEqual([{ from: started.occurredAt, to: null }]);
      // The copy naming another account is parked, as it would be in a chunk of its own.
      const parked = async () =>
        (await readTopic(topics.lifecycleDlq, 1, 5_000, 500)).some(
          (m) => m.value.includes(started.id) && m.value.includes('acc_someone_else'),
        );
      await eventually(parked, 30_000, 'the copy naming another account in the dead-letter topic');
    }
  });

  it('parks an event the database refuses in the dead-letter topic and applies its neighbours', async () => {
    const runtimeId = uid('rt');
    const poisonId = uid('evt_refused');
    // A stand-in for data PostgreSQL cannot take: a trigger that refuses one event id.
    await h.ds.query(`CREATE OR REPLACE FUNCTION refuse_one() RETURNS trigger AS $$
      BEGIN IF NEW.id = '${poisonId}' THEN RAISE EXCEPTION 'refused for the test' USING ERRCODE = '22023'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
    await h.ds.query(`CREATE TRIGGER refuse_one BEFORE INSERT ON runtime_events FOR EACH ROW EXECUTE FUNCTION refuse_one()`);
    try {
      const before = event(runtimeId, 'runtime.heartbeat', 1);
      const after = event(runtimeId, 'runtime.heartbeat', 3);
      await produce(h.config.topics.lifecycle, [
        { key: 'acc_consumer', value: before },
        { key: 'acc_consumer', value: { ...event(runtimeId, 'runtime.paused', 2), id: poisonId } },
        { key: 'acc_consumer', value: after },
      ]);
      await eventually(async () => (await eventsCount(h, runtimeId)) === 2, 30_000, 'the neighbours');
      const dlq = (await readTopic(h.config.topics.lifecycleDlq, 6, 20_000, 1_000)).filter((m) => m.value.includes(poisonId));
      expect(dlq).toHaveLength(1);
      expect(dlq[0]!.headers['x-dlq-reason']).toMatch(/processing failed: refused for the test/);
    } finally {
      await h.ds.query(`DROP TRIGGER refuse_one ON runtime_events`);
    }
  });
});
