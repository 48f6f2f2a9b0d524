import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle } from '../support/accounts';
import { startApp, uid, type Harness } from '../support/app';
import { freshDatabase, type FreshDatabase } from '../support/fresh-database';

const MIN = 60_000;
const H = 60 * MIN;
/** Before PRICED the shipped version applies (paused memory unpriced); from PRICED on, 0.25 credit per GiB-hour. */
const UNPRICED_DAY = new Date('2031-07-06T10:00:00.000Z');
const PRICED = new Date('2031-07-10T00:00:00.000Z');
const PRICED_DAY = new Date('2031-07-12T10:00:00.000Z');

function pausedPricedRateCard(): string {
  const shipped = JSON.parse(readFileSync('config/rate-card.json', 'utf8')) as { versions: Record<string, unknown>[] };
  const first = shipped.versions[0]!;
  const priced = { ...first, version: 'test-paused-priced', effectiveFrom: PRICED.toISOString(), ancillary: { paused_ram_gib_hour: '0.250000' } };
  const path = join(mkdtempSync(join(tmpdir(), 'rate-card-')), 'rate-card.json');
  writeFileSync(path, JSON.stringify({ ...shipped, versions: [first, priced] }));
  return path;
}

describe('paused-runtime memory: metered from pause/resume with the size class memory, shown unpriced or charged', () => {
  let db: FreshDatabase;
  let h: Harness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(UNPRICED_DAY);

  beforeAll(async () => {
    db = await freshDatabase('paused_memory');
    h = await startApp({ clock, env: { DATABASE_URL: db.url, RATE_CARD_FILE: pausedPricedRateCard() } });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(async () => {
    await h.close();
    await db.drop();
  });

  const accepted = async (body: unknown) => {
    const res = await h.request('POST', '/v1/events', { key: cp, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };
  const total = async (accountId: string) => (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body.total as string;
  const view = async (runtimeId: string) => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: cp })).body;
  const statement = async (accountId: string) => {
    const res = await h.request('GET', `/v1/accounts/${accountId}/statements/2031-07`, { key: admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as {
      lines: { section: string; description: string; quantity?: string; unit?: string; included?: string; beyondIncluded?: string; credits: string }[];
      ancillary: Record<string, unknown>[];
      closingBalance: string;
    };
  };
  const pausedLine = async (accountId: string) => (await statement(accountId)).lines.find((l) => l.section === 'unpriced' && l.description.includes('paused_ram_gib_hour'));
  const unpricedMetric = async () => {
    const metrics = await h.request('GET', '/metrics', { key: admin });
    const line = String(metrics.body).split('\n').find((l) => l.startsWith('dl_billing_ancillary_unpriced_total{kind="paused_ram"'));
    return line ? Number(line.split(' ').pop()) : 0;
  };
  /** A runtime reserved at `day` (size class `sizeClass`) and the events of its session, by name. */
  const runtime = async (day: Date, sizeClass: 'small' | 'medium') => {
    clock.set(day);
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    const runtimeId = uid('rt');
    const res = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId, variant: 'datalayer', environment: { name: 'python-simple', sizeClass }, minutes: 120 },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    clock.set(new Date(day.getTime() + H));
    const at = (minutes: number) => new Date(day.getTime() + minutes * MIN);
    let seq = 0;
    return {
      accountId,
      runtimeId,
      started: (m: number) => lifecycle(accountId, runtimeId, 'runtime.started', at(m), ++seq),
      paused: (m: number) => lifecycle(accountId, runtimeId, 'runtime.paused', at(m), ++seq),
      resumed: (m: number) => lifecycle(accountId, runtimeId, 'runtime.resumed', at(m), ++seq),
      terminated: (m: number) => lifecycle(accountId, runtimeId, 'runtime.terminated', at(m), ++seq, { reason: 'user_requested' }),
    };
  };

  it('meters 30 paused minutes of a small runtime (1 GiB) as 0.5 GiB-hour, unpriced: on the statement with its quantity, counted, never charged', async () => {
    const before = await unpricedMetric();
    const r = await runtime(UNPRICED_DAY, 'small');
    await accepted([r.started(0), r.paused(10), r.resumed(40), r.terminated(50)]);
    // 20 running minutes at 1 credit/h; the paused half hour is not charged.
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 1200, charged: '0.333334' });
    expect(await total(r.accountId)).toBe('9.666666');
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000', unit: 'GiB-hour', credits: '0.000000', included: '0.000000', beyondIncluded: '0.500000' });
    expect((await statement(r.accountId)).closingBalance).toBe('9.666666');
    expect(await unpricedMetric()).toBeCloseTo(before + 0.5, 6);
  });

  it('gives the same paused quantity for any delivery order and duplicated events', async () => {
    const r = await runtime(UNPRICED_DAY, 'small');
    const events = [r.started(0), r.paused(10), r.resumed(40), r.terminated(50)];
    await accepted([events[3], events[1], events[3], events[2]]);
    await accepted([events[0], events[1], events[0]]);
    await accepted(events);
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 1200, charged: '0.333334' });
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000', unit: 'GiB-hour' });
  });

  it('records a late pause after the settlement, and corrects it when a later event shortens the pause', async () => {
    const r = await runtime(UNPRICED_DAY, 'small');
    await accepted([r.started(0), r.terminated(50)]);
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 3000 });
    expect(await pausedLine(r.accountId)).toBeUndefined();
    // Paused from minute 10 to the termination: 40 minutes, 0.666667 GiB-hour (rounded up).
    await accepted(r.paused(10));
    expect(await view(r.runtimeId)).toMatchObject({ status: 'settled', runningSeconds: 600, charged: '0.166667' });
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.666667' });
    await accepted(r.resumed(40));
    expect(await view(r.runtimeId)).toMatchObject({ runningSeconds: 1200, charged: '0.333334' });
    expect(await pausedLine(r.accountId)).toMatchObject({ quantity: '0.500000' });
  });

  it('charges paused memory exactly once priced (0.25 credit per GiB-hour of a medium runtime, 4 GiB), and corrects the charge on a late event', async () => {
    const r = await runtime(PRICED_DAY, 'medium');
    await accepted([r.started(0), r.paused(10), r.resumed(40), r.terminated(50)]);
    // Running 20 min at 2 credits/h: 0.666667; paused 30 min × 4 GiB = 2 GiB-hours × 0.25 = 0.5.
    expect(await view(r.runtimeId)).toMatchObject({ charged: '0.666667' });
    expect(await total(r.accountId)).toBe('8.833333');
    // A late pause at minute 45: running 15 min (0.5), paused 35 min × 4 GiB × 0.25 = 0.583334 (rounded up once).
    await accepted(r.paused(45));
    expect(await view(r.runtimeId)).toMatchObject({ charged: '0.500000' });
    expect(await total(r.accountId)).toBe('8.916666');
    // Redelivery changes nothing.
    await accepted(r.paused(45));
    expect(await total(r.accountId)).toBe('8.916666');
    const s = await statement(r.accountId);
    expect(s.lines.find((l) => l.section === 'unpriced' && l.description.includes('paused_ram'))).toBeUndefined();
    expect(s.ancillary).toEqual([
      { kind: 'paused_ram', unit: 'GiB-hour', priced: true, quantity: '2.333334', amount: '0.583334', charged: '0.583334', unpaid: '0.000000', rateCardVersions: ['test-paused-priced'] },
    ]);
    expect(s.closingBalance).toBe('8.916666');
  });
});
