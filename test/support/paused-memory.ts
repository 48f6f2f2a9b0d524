import { afterAll, beforeAll, expect } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount, lifecycle } from './accounts';
import { rateCardFileWith } from './ancillary';
import { startAppOnFreshDatabase, uid, type Harness } from './app';

export const MIN = 60_000;
export const H = 60 * MIN;
/** Before PRICED the shipped version applies (paused memory unpriced); from PRICED on, 0.25 credit per GiB-hour. */
export const UNPRICED_DAY = new Date('2031-07-06T10:00:00.000Z');
export const PRICED = new Date('2031-07-10T00:00:00.000Z');
export const PRICED_DAY = new Date('2031-07-12T10:00:00.000Z');

export interface StatementBody {
  lines: {
    section: string;
    description: string;
    quantity?: string;
    unit?: string;
    included?: string;
    beyondIncluded?: string;
    credits: string;
  }[];
  ancillary: Record<string, unknown>[];
  closingBalance: string;
}

/** Reads of what a user sees about paused memory: the wallet, the reservation, the July 2031 statement, the metric. */
function pausedMemoryReads(h: Harness, keys: { admin: string; cp: string }) {
  const statement = async (accountId: string): Promise<StatementBody> => {
    const res = await h.request('GET', `/v1/accounts/${accountId}/statements/2031-07`, { key: keys.admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as StatementBody;
  };
  return {
    accepted: async (body: unknown) => {
      const res = await h.request('POST', '/v1/events', { key: keys.cp, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    },
    total: async (accountId: string) =>
      (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: keys.admin })).body.total as string,
    view: async (runtimeId: string) => (await h.request('GET', `/v1/reservations/${runtimeId}`, { key: keys.cp })).body,
    statement,
    pausedLine: async (accountId: string) =>
      (await statement(accountId)).lines.find((l) => l.section === 'unpriced' && l.description.includes('paused_ram_gib_hour')),
    unpricedMetric: async () => {
      const metrics = await h.request('GET', '/metrics', { key: keys.admin });
      const line = String(metrics.body)
        .split('\n')
        .find((l) => l.startsWith('dl_billing_ancillary_unpriced_total{kind="paused_ram"'));
      return line ? Number(line.split(' ').pop()) : 0;
    },
  };
}

export interface RuntimeOptions {
  /** Reserved minutes (120 by default). */
  minutes?: number;
  plan?: 'free' | 'enterprise';
}

/** A runtime reserved at `day` (size class `sizeClass`) for an account of its own, and the events of its session, by minute. */
async function pausedRuntime(
  h: Harness,
  keys: { admin: string; cp: string },
  clock: ManualClock,
  day: Date,
  sizeClass: 'small' | 'medium',
  opts: RuntimeOptions = {},
) {
  const minutes = opts.minutes ?? 120;
  clock.set(day);
  const accountId = await fundedAccount(h, keys.admin, { credits: '10.000000', plan: opts.plan ?? 'enterprise' });
  const runtimeId = uid('rt');
  const res = await h.request('POST', '/v1/reservations', {
    key: keys.cp,
    body: { accountId, runtimeId, variant: 'datalayer', environment: { name: 'python-simple', sizeClass }, minutes },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  clock.set(new Date(day.getTime() + H));
  const at = (m: number) => new Date(day.getTime() + m * MIN);
  let seq = 0;
  return {
    accountId,
    runtimeId,
    at,
    started: (m: number) => lifecycle(accountId, runtimeId, 'runtime.started', at(m), ++seq),
    paused: (m: number) => lifecycle(accountId, runtimeId, 'runtime.paused', at(m), ++seq),
    resumed: (m: number) => lifecycle(accountId, runtimeId, 'runtime.resumed', at(m), ++seq),
    terminated: (m: number) => lifecycle(accountId, runtimeId, 'runtime.terminated', at(m), ++seq, { reason: 'user_requested' }),
  };
}

export interface PausedMemorySuite {
  h: Harness;
  admin: string;
  cp: string;
  clock: ManualClock;
  reads: ReturnType<typeof pausedMemoryReads>;
  runtime: (day: Date, sizeClass: 'small' | 'medium', opts?: RuntimeOptions) => ReturnType<typeof pausedRuntime>;
}

/** Inside a describe: a fresh database and app on the paused-priced rate card with a manual clock, its keys and reads. */
export function pausedMemorySuite(prefix: string, env: Record<string, string> = {}): PausedMemorySuite {
  const suite = { clock: new ManualClock(UNPRICED_DAY) } as PausedMemorySuite;
  beforeAll(async () => {
    const rateCard = rateCardFileWith('test-paused-priced', PRICED.toISOString(), { paused_ram_gib_hour: '0.250000' });
    suite.h = await startAppOnFreshDatabase(prefix, { clock: suite.clock, env: { RATE_CARD_FILE: rateCard, ...env } });
    const keys = { admin: await suite.h.key('admin'), cp: await suite.h.key('control-plane') };
    Object.assign(suite, keys, {
      reads: pausedMemoryReads(suite.h, keys),
      runtime: (day: Date, sizeClass: 'small' | 'medium', opts?: RuntimeOptions) =>
        pausedRuntime(suite.h, keys, suite.clock, day, sizeClass, opts),
    });
  });
  afterAll(() => suite.h.close());
  return suite;
}
