import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, SMALL } from '../support/accounts';
import { GIB, pricedRateCardFile, usageEvent } from '../support/ancillary';
import { startAppOnFreshDatabase, uid, type Harness } from '../support/app';

const H = 3_600_000;
const DAY = new Date('2031-03-01T00:00:00.000Z');
const at = (hours: number) => new Date(DAY.getTime() + hours * H);

describe('ancillary usage: snapshots, volumes and egress metered and charged', () => {
  let h: Harness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(DAY);

  beforeAll(async () => {
    // Ancillary items are priced from 05:00 of DAY; before, the shipped version (all unpriced) applies.
    h = await startAppOnFreshDatabase('ancillary', { clock, env: { RATE_CARD_FILE: pricedRateCardFile(at(5).toISOString()) } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(() => h.close());

  const send = (body: unknown) => h.request('POST', '/v1/events', { key: cp, body });
  const accepted = async (body: unknown) => {
    const res = await send(body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { accepted: number; duplicates: number };
  };
  const total = async (accountId: string) =>
    (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
  const accrue = async () => {
    const res = await h.request('POST', '/v1/admin/jobs/ancillary-accrual/run', { key: admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.result;
  };
  const volume = (accountId: string, volumeId: string) => ({
    created: (hour: number, sizeGiB: number) => usageEvent(accountId, 'volume.created', at(hour), { volumeId, sizeGiB }),
    resized: (hour: number, sizeGiB: number) => usageEvent(accountId, 'volume.resized', at(hour), { volumeId, sizeGiB }),
    deleted: (hour: number) => usageEvent(accountId, 'volume.deleted', at(hour), { volumeId }),
  });

  it('charges a volume per hour of existence at its size in each hour (2,000 µcr per GiB-hour), once however often the job runs', async () => {
    clock.set(at(12));
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const v = volume(accountId, uid('vol'));
    // 10 GiB from 06:00, 20 GiB from 08:30, deleted at 10:00: 20,000 + 20,000 + 30,000 + 40,000 µcr.
    await accepted([v.created(6, 10), v.resized(8.5, 20), v.deleted(10)]);
    await accrue();
    expect(await total(accountId)).toBe('9.890000');
    await accrue();
    expect(await total(accountId)).toBe('9.890000');
  });

  it('gives the same charge for any delivery order and duplicates, and corrects hours already charged when a late event arrives', async () => {
    clock.set(at(12));
    const inOrder = await fundedAccount(h, admin, { credits: '10.000000' });
    const late = await fundedAccount(h, admin, { credits: '10.000000' });
    const volumeId = uid('vol');
    const a = volume(inOrder, volumeId);
    await accepted([a.deleted(10), a.resized(8, 20), a.created(6, 10), a.created(6, 10)]);
    await accrue();
    // 10 GiB 06-08, 20 GiB 08-10: 2 × 20,000 + 2 × 40,000.
    expect(await total(inOrder)).toBe('9.880000');

    const b = volume(late, uid('vol'));
    await accepted([b.created(6, 10), b.deleted(10)]);
    await accrue();
    expect(await total(late)).toBe('9.920000');
    await accepted(b.resized(8, 20)); // after its hours were charged
    await accrue();
    expect(await total(late)).toBe('9.880000');

    const duplicate = b.created(6, 10);
    expect(await accepted([duplicate, duplicate])).toEqual({ accepted: 1, duplicates: 1 });
    expect(await accepted(duplicate)).toEqual({ accepted: 0, duplicates: 1 });
  });

  it('refunds hours charged when a late deletion ends the item earlier', async () => {
    clock.set(at(9));
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const v = volume(accountId, uid('vol'));
    await accepted(v.created(6, 1));
    await accrue(); // 06, 07, 08: 3 × 2,000
    expect(await total(accountId)).toBe('9.994000');
    await accepted(v.deleted(7));
    await accrue();
    expect(await total(accountId)).toBe('9.998000');
  });

  it('keeps the rate-card version an hour was metered under: the hour before the price took effect stays unpriced, and is counted', async () => {
    clock.set(at(8));
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const snapshotId = uid('snap');
    await accepted([
      usageEvent(accountId, 'snapshot.created', at(4), { snapshotId, sizeBytes: 2 * GIB }),
      usageEvent(accountId, 'snapshot.deleted', at(6), { snapshotId }),
    ]);
    const before = await unpricedMetric('snapshot');
    await accrue();
    // 04:00-05:00 unpriced (version 2026-12-01), 05:00-06:00 at 1,000 µcr per GiB-hour × 2 GiB.
    expect(await total(accountId)).toBe('9.998000');
    // 2 GiB for one hour, in GiB-months of 730 hours.
    expect((await unpricedMetric('snapshot')) - before).toBeCloseTo(2 / 730, 5);
  });

  it('charges egress per report (0.1 credit per GiB), once per event id', async () => {
    clock.set(at(12));
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const report = usageEvent(
      accountId,
      'egress.reported',
      at(11),
      { bytes: 3 * GIB, from: at(10).toISOString(), to: at(11).toISOString() },
      { runtimeId: uid('rt') },
    );
    expect(await accepted(report)).toEqual({ accepted: 1, duplicates: 0 });
    expect(await total(accountId)).toBe('9.700000');
    expect(await accepted(report)).toEqual({ accepted: 0, duplicates: 1 });
    expect(await total(accountId)).toBe('9.700000');

    // The usage API and the ancillary report show it by kind.
    const period = `from=${at(0).toISOString()}&to=${at(24).toISOString()}`;
    const usage = await h.request('GET', `/v1/accounts/${accountId}/usage?${period}`, { key: admin });
    expect(usage.status).toBe(200);
    expect(usage.body.ancillary).toEqual([
      {
        kind: 'egress',
        unit: 'GiB',
        priced: true,
        quantity: '3.000000',
        amount: '0.300000',
        charged: '0.300000',
        unpaid: '0.000000',
        rateCardVersions: ['test-priced'],
      },
    ]);
    const reported = await h.request('GET', `/v1/reports/ancillary?${period}`, { key: admin });
    expect(reported.status).toBe(200);
    expect(reported.body.items.filter((i: { account: string }) => i.account === accountId)).toEqual([
      {
        account: accountId,
        kind: 'egress',
        unit: 'GiB',
        priced: true,
        quantity: '3.000000',
        amount: '0.300000',
        charged: '0.300000',
        unpaid: '0.000000',
      },
    ]);
    const csv = await h.request('GET', `/v1/reports/ancillary?${period}&format=csv`, { key: admin });
    expect(String(csv.body)).toContain(`${accountId},egress,GiB,true,3.000000,0.300000,0.300000,0.000000`);
  });

  it('counts an egress report in the period its bytes were sent: one ending at midnight on the 1st is the month before', async () => {
    clock.set(at(1));
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const lastHourOfFebruary = { bytes: GIB, from: at(-1).toISOString(), to: at(0).toISOString() };
    await accepted(usageEvent(accountId, 'egress.reported', at(0), lastHourOfFebruary, { runtimeId: uid('rt') }));
    const egressIn = async (from: Date, to: Date) => {
      const usage = await h.request('GET', `/v1/accounts/${accountId}/usage?from=${from.toISOString()}&to=${to.toISOString()}`, {
        key: admin,
      });
      expect(usage.status, JSON.stringify(usage.body)).toBe(200);
      return (usage.body.ancillary as { kind: string; quantity: string }[]).map((a) => `${a.kind} ${a.quantity}`);
    };
    expect(await egressIn(at(-28 * 24), at(0))).toEqual(['egress 1.000000']);
    expect(await egressIn(at(0), at(24))).toEqual([]);
    // Priced the same way: a report ending as the price takes effect (05:00) is the hour before's, unpriced.
    await accepted(
      usageEvent(
        accountId,
        'egress.reported',
        at(5),
        { bytes: GIB, from: at(4).toISOString(), to: at(5).toISOString() },
        { runtimeId: uid('rt') },
      ),
    );
    expect(await total(accountId)).toBe('10.000000');
    await accepted(
      usageEvent(
        accountId,
        'egress.reported',
        at(6),
        { bytes: GIB, from: at(5).toISOString(), to: at(6).toISOString() },
        { runtimeId: uid('rt') },
      ),
    );
    expect(await total(accountId)).toBe('9.900000');
  });

  it('charges what the wallet can pay, and the rest once credits come in', async () => {
    clock.set(at(12));
    const accountId = await fundedAccount(h, admin, { credits: '0.050000' });
    await accepted(
      usageEvent(
        accountId,
        'egress.reported',
        at(11),
        { bytes: GIB, from: at(10).toISOString(), to: at(11).toISOString() },
        { runtimeId: uid('rt') },
      ),
    );
    expect(await total(accountId)).toBe('0.000000');
    const granted = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
      key: admin,
      body: { credits: '1.000000', reason: 'top up' },
      headers: { 'idempotency-key': uid('grant') },
    });
    expect(granted.status).toBe(201);
    await accrue();
    expect(await total(accountId)).toBe('0.950000');
  });

  it('refuses invalid events with every finding named by its field, applying none of the request', async () => {
    const accountId = await fundedAccount(h, admin, {});
    const res = await send([
      usageEvent(accountId, 'snapshot.created', at(1), { snapshotId: 's1' }),
      usageEvent(accountId, 'egress.reported', at(1), { bytes: -1, from: at(1).toISOString(), to: at(0).toISOString() }),
      usageEvent(accountId, 'volume.resized', at(1), { volumeId: 'v1', sizeGiB: 0 }),
    ]);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('DL_BILLING_REQUEST_INVALID');
    const fields = (res.body.error.findings as { field: string }[]).map((f) => f.field).sort();
    expect(fields).toEqual([
      'events[0].data.sizeBytes',
      'events[1].data.bytes',
      'events[1].data.to',
      'events[1].runtimeId',
      'events[2].data.sizeGiB',
    ]);
  });

  it('names every type it takes, the ancillary ones included, when an event has an unknown type', async () => {
    const accountId = await fundedAccount(h, admin, {});
    const res = await send([usageEvent(accountId, 'runtime.exploded', at(1), {})]);
    expect(res.status).toBe(400);
    const finding = (res.body.error.findings as { field: string; message: string }[]).find((f) => f.field === 'events[0].type');
    expect(finding?.message).toMatch(/^Invalid option: expected one of "runtime\.started"\|.*"runtime\.launch_failed"\|/);
    for (const type of ['snapshot.created', 'volume.resized', 'egress.reported']) expect(finding?.message).toContain(`"${type}"`);
  });

  it('refuses an event naming another account than the item’s', async () => {
    clock.set(at(12));
    const owner = await fundedAccount(h, admin, {});
    const other = await fundedAccount(h, admin, {});
    const snapshotId = uid('snap');
    await accepted(usageEvent(owner, 'snapshot.created', at(1), { snapshotId, sizeBytes: 10 }));
    const res = await send({ events: [usageEvent(other, 'snapshot.deleted', at(2), { snapshotId })] });
    expect(res.status).toBe(400);
    expect(res.body.error.findings).toEqual([
      { field: 'events[0].accountId', message: `snapshot ${snapshotId} belongs to another account` },
    ]);
  });

  it("refuses the first event of a new item when another account's races it, and an egress report of another account's runtime", async () => {
    clock.set(at(12));
    const [a, b] = [await fundedAccount(h, admin, { credits: '10.000000' }), await fundedAccount(h, admin, {})];
    for (let trial = 0; trial < 8; trial++) {
      const volumeId = uid('vol');
      const answers = await Promise.all([
        send([usageEvent(a, 'volume.created', at(1), { volumeId, sizeGiB: 500 })]),
        send([usageEvent(b, 'volume.created', at(1), { volumeId, sizeGiB: 1 })]),
      ]);
      expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
      const owner = answers[0]!.status === 200 ? a : b;
      const events = await h.ds.query(`SELECT DISTINCT account_id FROM ancillary_events WHERE item_key = $1`, [`volume:${volumeId}`]);
      expect(events).toEqual([{ account_id: owner }]);
    }
    const runtimeId = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId: a, runtimeId, ...SMALL } })).status).toBe(201);
    const egress = { bytes: GIB, from: at(1).toISOString(), to: at(2).toISOString() };
    const foreign = await send([usageEvent(b, 'egress.reported', at(2), egress, { runtimeId })]);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error.findings).toEqual([
      { field: 'events[0].runtimeId', message: `runtime ${runtimeId} belongs to another account` },
    ]);
    await accepted(usageEvent(a, 'egress.reported', at(2), egress, { runtimeId }));
  });

  it('counts priced ancillary charges in the account spend limit: a launch that would pass it is refused', async () => {
    clock.set(at(12));
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const limit = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '1.000000', period: 'month', thresholds: [50, 80, 100] },
    });
    expect(limit.status, JSON.stringify(limit.body)).toBe(200);
    await accepted(
      usageEvent(
        accountId,
        'egress.reported',
        at(11),
        { bytes: 9 * GIB, from: at(10).toISOString(), to: at(11).toISOString() },
        { runtimeId: uid('rt') },
      ),
    );
    const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
    expect(wallet.spend).toMatchObject({ spent: '0.900000', limit: '1.000000' });
    const launch = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId: uid('rt'), variant: 'datalayer', environment: { name: 'py', sizeClass: 'small' }, minutes: 60 },
    });
    expect(launch.status).toBe(402);
    expect(launch.body.error.code).toBe('DL_BILLING_SPEND_LIMIT_REACHED');
    const alerts: { payload: { type: string; data: { threshold?: number } } }[] = await h.ds.query(
      `SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' LIKE 'spend_limit.%' ORDER BY id`,
      [accountId],
    );
    expect(alerts.map((a) => a.payload.data.threshold)).toEqual([50, 80]);
  });

  it('warns of an egress charge the wallet cannot pay: it is spent all the same', async () => {
    clock.set(at(12));
    const accountId = await fundedAccount(h, admin, { credits: '0' });
    const limit = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '1.000000', period: 'month', thresholds: [50, 80, 100] },
    });
    expect(limit.status, JSON.stringify(limit.body)).toBe(200);
    const egress = { bytes: 9 * GIB, from: at(10).toISOString(), to: at(11).toISOString() };
    await accepted(usageEvent(accountId, 'egress.reported', at(11), egress, { runtimeId: uid('rt') }));
    expect((await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.spend).toMatchObject({ spent: '0.900000' });
    const alerts: { payload: { data: { threshold?: number } } }[] = await h.ds.query(
      `SELECT payload FROM outbox WHERE key = $1 AND payload->>'type' LIKE 'spend_limit.%' ORDER BY id`,
      [accountId],
    );
    expect(alerts.map((a) => a.payload.data.threshold)).toEqual([50, 80]);
  });

  it('counts storage accrued against the wallet in the account spend limit, like a runtime charge: the next launch past it is refused', async () => {
    clock.set(at(12));
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const limit = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '1.500000', period: 'month', thresholds: [50, 100] },
    });
    expect(limit.status, JSON.stringify(limit.body)).toBe(200);
    const v = volume(accountId, uid('vol'));
    await accepted([v.created(6, 100), v.deleted(11)]);
    const spend = async () => (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.spend;
    expect(await spend()).toMatchObject({ spent: '0.000000' });
    // 100 GiB × 5 hours at 2,000 µcr per GiB-hour: 1 credit, charged to the wallet and counted in its spend.
    await accrue();
    expect(await total(accountId)).toBe('9.000000');
    expect(await spend()).toMatchObject({ spent: '1.000000', limit: '1.500000' });
    // A one-hour small launch (1 credit) would take the month to 2 credits: refused.
    const launch = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId: uid('rt'), variant: 'datalayer', environment: { name: 'py', sizeClass: 'small' }, minutes: 60 },
    });
    expect(launch.status).toBe(402);
    expect(launch.body.error.code).toBe('DL_BILLING_SPEND_LIMIT_REACHED');
  });

  it('tells a wallet that cannot pay its storage, then flags its snapshots for deletion after the grace period (never deleting them), once', async () => {
    clock.set(at(12));
    const accountId = await fundedAccount(h, admin, {});
    const kept = uid('snap');
    const gone = uid('snap');
    await accepted([
      usageEvent(accountId, 'snapshot.created', at(8), { snapshotId: kept, sizeBytes: 10 * GIB }),
      usageEvent(accountId, 'snapshot.created', at(8), { snapshotId: gone, sizeBytes: GIB }),
      usageEvent(accountId, 'snapshot.deleted', at(9), { snapshotId: gone }),
    ]);
    await accrue();
    const outbox = async (type: string) =>
      (await h.ds.query(`SELECT topic, payload FROM outbox WHERE key = $1 AND payload->>'type' = $2 ORDER BY id`, [accountId, type])) as {
        topic: string;
        payload: Record<string, any>;
      }[];
    const [notice] = await outbox('storage.unpaid');
    expect(notice?.topic).toBe('billing.notifications.v1');
    expect(notice?.payload.data).toMatchObject({ since: at(8).toISOString(), unpaid: '0.041000' }); // 10 GiB × 4 h + 1 GiB × 1 h at 1,000 µcr
    expect(await outbox('snapshot.flag_for_deletion')).toEqual([]);

    clock.set(new Date(at(8).getTime() + 72 * H + 1));
    await accrue();
    await accrue();
    const flags = await outbox('snapshot.flag_for_deletion');
    expect(flags.map((f) => [f.topic, f.payload.snapshotId, f.payload.reason])).toEqual([['billing.commands.v1', kept, 'storage_unpaid']]);
    expect(await outbox('storage.unpaid')).toHaveLength(1);
  });

  async function unpricedMetric(kind: string): Promise<number> {
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${admin}` } });
    const line = metrics.body.split('\n').find((l) => l.startsWith(`dl_billing_ancillary_unpriced_total{kind="${kind}"`));
    return line ? Number(line.split(' ').pop()) : 0;
  }
});
