import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';

interface LowBalance {
  id: string;
  data: { available: string; threshold: string };
}

/**
 * `wallet.low_balance` is sent once per crossing of the threshold: again after the available
 * balance has come back to it (a top-up, a hold's release, the period's allowance), never twice
 * for one crossing. Enterprise's threshold is 1 credit; `small` costs 1 credit an hour.
 */
describe('wallet.low_balance once per crossing', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  const reserve = (accountId: string, minutes: number, runtimeId = uid('rt')) =>
    h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL, minutes } });
  const grant = async (accountId: string, credits: string) => {
    const r = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
      key: admin,
      body: { credits, reason: 'top-up' },
      headers: { 'idempotency-key': uid('grant') },
    });
    expect(r.status).toBe(201);
  };
  /** The low-balance notifications in the outbox, in order. */
  const told = async (accountId: string): Promise<LowBalance[]> =>
    (
      (await h.ds.query(
        `SELECT payload FROM outbox WHERE payload ->> 'type' = 'wallet.low_balance' AND payload ->> 'accountId' = $1 ORDER BY id`,
        [accountId],
      )) as { payload: LowBalance }[]
    ).map((r) => r.payload);

  it('drop below: one; still below: none; top-up above, drop again: a second with its own id; a top-up short of the threshold: none', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '2.500000' });
    expect((await reserve(accountId, 60)).status).toBe(201); // 1.5 left
    expect(await told(accountId)).toEqual([]);
    expect((await reserve(accountId, 60)).status).toBe(201); // 0.5: below
    expect((await told(accountId)).map((n) => n.data)).toEqual([expect.objectContaining({ available: '0.500000', threshold: '1.000000' })]);
    expect((await reserve(accountId, 6)).status).toBe(201); // 0.4: the same crossing
    expect(await told(accountId)).toHaveLength(1);
    // A replayed reservation sends nothing either.
    const replayed = uid('rt');
    await grant(accountId, '2.000000'); // 2.4: back above
    expect((await reserve(accountId, 90, replayed)).status).toBe(201); // 0.9: below again
    expect((await reserve(accountId, 90, replayed)).status).toBe(200);
    const twice = await told(accountId);
    expect(twice.map((n) => n.data.available)).toEqual(['0.500000', '0.900000']);
    expect(new Set(twice.map((n) => n.id)).size).toBe(2);
    await grant(accountId, '0.050000'); // 0.95: still below the threshold
    expect((await reserve(accountId, 6)).status).toBe(201); // 0.85
    expect(await told(accountId)).toHaveLength(2);
    expect(await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }).then((r) => r.body)).toMatchObject({
      available: '0.850000',
    });
  });

  it('reservations crossing together: one; a hold released back above the threshold re-arms it', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '3.000000' });
    const long = uid('rt');
    expect((await reserve(accountId, 120, long)).status).toBe(201); // 1.0 left: not below
    const answers = await Promise.all(Array.from({ length: 3 }, () => reserve(accountId, 30)));
    // 0.5, then 0: both below, one crossing; the third finds no credits.
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 402]);
    expect(await told(accountId)).toHaveLength(1);

    // The long runtime ran a minute: its hold's rest (about 1.98 credits) comes back, above the threshold.
    const start = new Date(Date.now() - 61_000);
    const events = [
      lifecycle(accountId, long, 'runtime.started', start, 1),
      lifecycle(accountId, long, 'runtime.terminated', new Date(start.getTime() + 60_000), 2, { reason: 'user' }),
    ];
    expect((await h.request('POST', '/v1/events', { key: cp, body: events })).body).toMatchObject({ accepted: 2 });
    expect((await reserve(accountId, 60)).status).toBe(201);
    const sent = await told(accountId);
    expect(sent.map((n) => n.data.available)).toEqual(['0.500000', '0.983333']);
    expect(new Set(sent.map((n) => n.id)).size).toBe(2);
  });

  it('a reservation that itself takes the balance from the threshold to below it is a new crossing, under an older, higher line', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '1.500000' });
    expect((await reserve(accountId, 60)).status).toBe(201); // 0.5: below, told
    expect(await told(accountId)).toHaveLength(1);
    // The line an older plan's notice set, above today's 1-credit threshold (a Team account's 50 credits).
    await h.ds.query(`UPDATE wallets SET low_balance_line = 50000000 WHERE account_id = $1`, [accountId]);
    await grant(accountId, '2.000000'); // 2.5: above the threshold, short of that line (not re-armed)
    expect((await reserve(accountId, 120)).status).toBe(201); // 0.5: this reservation crosses the threshold itself
    const sent = await told(accountId);
    expect(sent.map((n) => n.data.available)).toEqual(['0.500000', '0.500000']);
    expect(new Set(sent.map((n) => n.id)).size).toBe(2);
  });

  it("re-armed by the period's allowance granted within the period (the monthly reset's statement)", async () => {
    // Enterprise without included credits: no allowance this month until the contract gives some.
    const accountId = await fundedAccount(h, admin, { credits: '1.500000' });
    expect((await reserve(accountId, 60)).status).toBe(201); // 0.5: below
    expect(await told(accountId)).toHaveLength(1);
    // The contract's 10 credits a month: this month's allowance is granted now, by the reset's set-based grant.
    const set = await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, {
      key: admin,
      body: { plan: 'enterprise', overrides: { includedCredits: '10.000000' } },
    });
    expect(set.status).toBe(200);
    expect(await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin }).then((r) => r.body)).toMatchObject({
      available: '10.500000',
    });
    expect((await reserve(accountId, 600)).status).toBe(201); // 0.5: below the same 1-credit line again
    const sent = await told(accountId);
    expect(sent.map((n) => n.data)).toEqual([
      expect.objectContaining({ available: '0.500000', threshold: '1.000000' }),
      expect.objectContaining({ available: '0.500000', threshold: '1.000000' }),
    ]);
    expect(new Set(sent.map((n) => n.id)).size).toBe(2);
  });
});
