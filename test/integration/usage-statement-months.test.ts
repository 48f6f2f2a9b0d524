import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { formatCredits, parseCredits } from '../../src/common/money';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppOnFreshDatabase, uid, type FreshHarness } from '../support/app';
import { events, ok } from '../support/requests';

const MIN = 60_000;
const t = (iso: string) => new Date(iso);
const at = (base: string, minutes: number) => new Date(t(base).getTime() + minutes * MIN);

/**
 * A month's usage report and the same month's statement read the same charges: a correction of a
 * runtime settled in January, posted in February (a late pause; a late termination after a forced
 * settlement), is a movement of February in the statement and the ledger, and so in the usage
 * reports; a runtime running across midnight on the 31st is February's in both.
 */
describe('usage reports and statements agree month by month when corrections cross the month end', () => {
  let h: FreshHarness;
  let admin: string;
  let cp: string;
  const clock = new ManualClock(t('2031-01-31T23:00:00.000Z'));

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('usage_months', {
      clock,
      env: { TERMINATE_GRACE_MS: String(2 * MIN), SETTLE_GRACE_MS: String(10 * MIN) },
    });
    admin = await h.key('admin');
    cp = await h.key('control-plane');
  });
  afterAll(async () => {
    await h.close();
  });

  const reserve = (accountId: string, runtimeId: string, userId: string, minutes: number) =>
    ok(h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, userId, ...SMALL, minutes } }), 201);
  const sweepAt = async (when: Date) => {
    clock.set(when);
    return (await ok(h.request('POST', '/v1/admin/jobs/expiry-sweep/run', { key: admin }))).result;
  };
  const report = (path: string) => ok(h.request('GET', `/v1/reports/${path}`, { key: admin }));
  const runtimeCharges = (s: { lines: { section: string; credits: string }[] }) =>
    formatCredits(-s.lines.filter((l) => l.section === 'runtime_charges').reduce((sum, l) => sum + parseCredits(l.credits)!, 0n));

  let account: string;
  const months = [
    // January: 40 minutes (0.666667) and the forced hold (0.166667); February: the 30 minutes across
    // midnight (0.500000) less the two corrections (0.166667 and 0.033333).
    { period: '2031-01', from: '2031-01-01T00:00:00.000Z', to: '2031-02-01T00:00:00.000Z', charges: '0.833334' },
    { period: '2031-02', from: '2031-02-01T00:00:00.000Z', to: '2031-03-01T00:00:00.000Z', charges: '0.300000' },
  ];

  it('puts each charge and each correction in the month it was posted, in the statement and in every usage report', async () => {
    account = await fundedAccount(h, admin, { credits: '100.000000' });
    const [late, forced, across] = [uid('rt'), uid('rt'), uid('rt')];

    // January 31st: 40 minutes settled at 23:50 (a pause of 10 of them is reported only in February).
    await reserve(account, late, 'ann', 60);
    clock.set(t('2031-01-31T23:51:00.000Z'));
    await events(
      h,
      cp,
      lifecycle(account, late, 'runtime.started', at('2031-01-31T23:00:00.000Z', 10), 1),
      lifecycle(account, late, 'runtime.terminated', at('2031-01-31T23:00:00.000Z', 50), 4, { reason: 'user' }),
    );

    // A 10-minute reservation used up at 23:30 and never terminated: forced at its hold before midnight.
    clock.set(t('2031-01-31T23:20:00.000Z'));
    await reserve(account, forced, 'ben', 10);
    await events(h, cp, lifecycle(account, forced, 'runtime.started', t('2031-01-31T23:20:00.000Z'), 1));
    expect(await sweepAt(t('2031-01-31T23:31:00.000Z'))).toMatchObject({ reservationExpired: 1 });
    expect(await sweepAt(t('2031-01-31T23:45:00.000Z'))).toMatchObject({ forcedSettlements: 1 });

    // Across midnight: 23:45 to 00:15, settled on February 1st.
    await reserve(account, across, 'ann', 60);
    await events(h, cp, lifecycle(account, across, 'runtime.started', t('2031-01-31T23:45:00.000Z'), 1));
    clock.set(t('2031-02-01T00:16:00.000Z'));
    await events(h, cp, lifecycle(account, across, 'runtime.terminated', t('2031-02-01T00:15:00.000Z'), 2, { reason: 'user' }));

    // February 2nd: the late events correct January's two charges.
    clock.set(t('2031-02-02T10:00:00.000Z'));
    await events(
      h,
      cp,
      lifecycle(account, late, 'runtime.paused', at('2031-01-31T23:00:00.000Z', 20), 2),
      lifecycle(account, late, 'runtime.resumed', at('2031-01-31T23:00:00.000Z', 30), 3),
      lifecycle(account, forced, 'runtime.terminated', at('2031-01-31T23:20:00.000Z', 8), 2, { reason: 'user' }),
    );
    expect((await ok(h.request('GET', `/v1/reservations/${late}`, { key: cp }))).charged).toBe('0.500000');
    expect((await ok(h.request('GET', `/v1/reservations/${forced}`, { key: cp }))).charged).toBe('0.133334');

    for (const m of months) {
      const statement = await ok(h.request('GET', `/v1/accounts/${account}/statements/${m.period}`, { key: admin }));
      expect(runtimeCharges(statement), m.period).toBe(m.charges);
      const range = `from=${m.from}&to=${m.to}`;
      const credits = await report(`credits?${range}&groupBy=account`);
      const row = credits.items.find((i: { account: string }) => i.account === account);
      expect(formatCredits(parseCredits(row.consumed)! - parseCredits(row.refunded)!), `credits report ${m.period}`).toBe(m.charges);
      for (const groupBy of ['account', 'user', 'environment', 'day']) {
        const usage = await report(`usage?${range}&groupBy=${groupBy}`);
        expect(usage.totals.credits, `usage by ${groupBy} ${m.period}`).toBe(m.charges);
      }
      const top = await report(`top-consumers?${range}`);
      expect(top.items.find((i: { account: string }) => i.account === account)?.credits, `top consumers ${m.period}`).toBe(m.charges);
    }
  });

  it("shows the account's own usage of a month as that month's statement charges it, by runtime, environment, day and user", async () => {
    for (const m of months) {
      for (const groupBy of ['runtime', 'environment', 'day', 'user']) {
        const usage = await ok(
          h.request('GET', `/v1/accounts/${account}/usage?from=${m.from}&to=${m.to}&groupBy=${groupBy}`, { key: admin }),
        );
        expect(usage.total.credits, `${groupBy} ${m.period}`).toBe(m.charges);
      }
    }
    // The runtime across midnight is February's (settled then), with its 30 minutes; January's two runtimes
    // are January's, with their corrected running time, and February has their corrections' credits.
    const january = await ok(
      h.request('GET', `/v1/accounts/${account}/usage?from=${months[0]!.from}&to=${months[0]!.to}&groupBy=runtime`, { key: admin }),
    );
    expect(january.total).toEqual({ runtimes: 2, seconds: 30 * 60 + 8 * 60, credits: '0.833334' });
    const february = await ok(
      h.request('GET', `/v1/accounts/${account}/usage?from=${months[1]!.from}&to=${months[1]!.to}&groupBy=day`, { key: admin }),
    );
    expect(february.items).toEqual([
      { day: '2031-02-01', runtimes: 1, seconds: 30 * 60, credits: '0.500000' },
      { day: '2031-02-02', runtimes: 0, seconds: 0, credits: '-0.200000' },
    ]);
  });

  it("shows on the console's trend by size class the credits each day's statement lines charge", async () => {
    const cookie = await h.consoleSession(admin);
    /** The credits of each row (day, size class) of the console's table of the trend by size class and GPU. */
    const trend = async (from: string, to: string) => {
      const page = await h.app.inject({ method: 'GET', url: `/admin?from=${from}&to=${to}`, headers: { cookie } });
      expect(page.statusCode).toBe(200);
      const table = page.body.slice(
        page.body.indexOf('<table id="table-classes"'),
        page.body.indexOf('</table>', page.body.indexOf('<table id="table-classes"')),
      );
      return [
        ...table.matchAll(
          /<tr><td[^>]*data-col="day"[^>]*>([^<]*)<\/td>.*?data-col="runtimes"[^>]*>([^<]*)<\/td>.*?data-col="credits"[^>]*>([^<]*)<\/td><\/tr>/g,
        ),
      ].map((m) => [m[1], m[2], m[3]]);
    };
    // January 31st: two runtimes settled, charged 0.833334 then; February: the runtime across midnight on the
    // 1st, and on the 2nd the corrections of January's two (−0.200000), as the February statement has them.
    expect(await trend(months[0]!.from, months[0]!.to)).toEqual([['2031-01-31', '2', '0.833334']]);
    expect(await trend(months[1]!.from, months[1]!.to)).toEqual([
      ['2031-02-01', '1', '0.50'],
      ['2031-02-02', '0', '-0.20'],
    ]);
  });
});

/** A clock that moves on by a millisecond each time it is read, as time does between two reads. */
class TickingClock extends ManualClock {
  override now(): Date {
    const at = super.now();
    this.advance(1);
    return at;
  }
}

describe('a settlement at the last milliseconds of a month is in the same month in the usage reports and the statement', () => {
  let h: FreshHarness;
  const clock = new TickingClock(t('2031-03-31T22:00:00.000Z'));

  beforeAll(async () => {
    h = await startAppOnFreshDatabase('usage_month_edge', { clock });
  });
  afterAll(async () => {
    await h.close();
  });

  it('dates each runtime charge once, whichever of the month end the clock reads on either side of it', async () => {
    const admin = await h.key('admin');
    const cp = await h.key('control-plane');
    const account = await fundedAccount(h, admin, { credits: '100.000000' });
    const midnight = t('2031-04-01T00:00:00.000Z').getTime();
    const send = async (...body: unknown[]) => {
      const res = await h.request('POST', '/v1/events', { key: cp, body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    };
    // Runtimes terminated as the month ends: each settled a few milliseconds nearer midnight than the last.
    for (let k = 80; k >= 1; k -= 1) {
      const runtimeId = uid('rt');
      clock.set(new Date(midnight - 40 * MIN));
      const res = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId: account, runtimeId, ...SMALL, minutes: 30 } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      await send(lifecycle(account, runtimeId, 'runtime.started', new Date(midnight - 40 * MIN), 1));
      clock.set(new Date(midnight - k));
      await send(lifecycle(account, runtimeId, 'runtime.terminated', new Date(midnight - 40 * MIN + k * 1000), 2, { reason: 'user' }));
    }
    clock.set(t('2031-04-01T01:00:00.000Z'));
    for (const [period, from, to] of [
      ['2031-03', '2031-03-01T00:00:00.000Z', '2031-04-01T00:00:00.000Z'],
      ['2031-04', '2031-04-01T00:00:00.000Z', '2031-05-01T00:00:00.000Z'],
    ] as const) {
      const statement = await h.request('GET', `/v1/accounts/${account}/statements/${period}`, { key: admin });
      const lines = statement.body.lines as { section: string; credits: string }[];
      const charged = formatCredits(
        -lines.filter((l) => l.section === 'runtime_charges').reduce((sum, l) => sum + parseCredits(l.credits)!, 0n),
      );
      const usage = await h.request('GET', `/v1/reports/usage?from=${from}&to=${to}`, { key: admin });
      expect(usage.body.totals.credits, period).toBe(charged);
    }
  });
});
