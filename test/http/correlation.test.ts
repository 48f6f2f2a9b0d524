import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReservationsService } from '../../src/reservations/reservations.service';
import { fundedAccount, lifecycle, SMALL } from '../support/accounts';
import { startAppWithKeys, uid, type Harness } from '../support/app';

interface Row {
  id: string;
  action: string;
  correlation_id: string | null;
  account_id: string | null;
  before: unknown;
  after: Record<string, unknown> | null;
}

/** Audit correlation ids: every row written while serving a request carries its id; an event's rows its event id. */
describe('audit correlation ids', () => {
  let h: Harness, admin: string, cp: string;
  beforeAll(async () => ({ h, admin, cp } = await startAppWithKeys()));
  afterAll(() => h.close());

  const auditOf = (accountId: string): Promise<Row[]> =>
    h.ds.query(`SELECT id::text, action, correlation_id, account_id, before, after FROM audit_log WHERE account_id = $1 ORDER BY id`, [
      accountId,
    ]);

  it('a request with x-request-id: the id is echoed, and its account.created, credits.granted, spend_limit.set, hold.created and api_key.* rows carry it', async () => {
    const accountId = uid('acc');
    const created = await h.request('POST', '/v1/accounts', {
      key: admin,
      body: { id: accountId, kind: 'organization', plan: 'enterprise', name: 'correlated' },
      headers: { 'x-request-id': 'req-account' },
    });
    expect(created.status).toBe(201);
    expect(created.headers['x-request-id']).toBe('req-account');
    const granted = await h.request('POST', `/v1/admin/accounts/${accountId}/grants`, {
      key: admin,
      body: { credits: '5.000000', reason: 'funds' },
      headers: { 'idempotency-key': uid('g'), 'x-request-id': 'req-grant' },
    });
    expect(granted.status).toBe(201);
    const limit = await h.request('PUT', `/v1/accounts/${accountId}/spend-limit`, {
      key: admin,
      body: { credits: '4.000000' },
      headers: { 'x-request-id': 'req-limit' },
    });
    expect(limit.status).toBe(200);
    const runtimeId = uid('rt');
    const reserved = await h.request('POST', '/v1/reservations', {
      key: cp,
      body: { accountId, runtimeId, ...SMALL, minutes: 60 },
      headers: { 'x-request-id': 'req-reserve' },
    });
    expect(reserved.status).toBe(201);
    expect(reserved.headers['x-request-id']).toBe('req-reserve');
    // Without x-request-id, one is generated and returned, and the rows carry that one.
    const extended = await h.request('POST', `/v1/reservations/${runtimeId}/extend`, {
      key: cp,
      body: { minutes: 30 },
      headers: { 'idempotency-key': uid('x') },
    });
    expect(extended.status).toBe(200);
    const generated = extended.headers['x-request-id'] as string;
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);

    const rows = await auditOf(accountId);
    expect(rows.map((r) => [r.action, r.correlation_id])).toEqual([
      ['account.created', 'req-account'],
      ['credits.granted', 'req-grant'],
      ['spend_limit.set', 'req-limit'],
      ['hold.created', 'req-reserve'],
      ['hold.increased', generated],
    ]);
    // hold.created: before and after are the wallet's balances (the same keys), the hold is after.hold.
    const hold = rows.find((r) => r.action === 'hold.created')!;
    expect(hold.before).toEqual({ total: '5.000000', held: '0.000000', available: '5.000000', debt: '0.000000' });
    expect(hold.after).toMatchObject({
      total: '5.000000',
      held: '1.000000',
      available: '4.000000',
      debt: '0.000000',
      hold: { id: `hold_${runtimeId}`, amount: '1.000000', reference: runtimeId },
    });

    const key = await h.request('POST', '/v1/admin/api-keys', {
      key: admin,
      body: { scopes: ['reports'], name: 'c' },
      headers: { 'x-request-id': 'req-key' },
    });
    expect(key.status).toBe(201);
    expect(
      (await h.request('DELETE', `/v1/admin/api-keys/${key.body.id}`, { key: admin, headers: { 'x-request-id': 'req-revoke' } })).status,
    ).toBe(200);
    const keyRows: Row[] = await h.ds.query(`SELECT action, correlation_id FROM audit_log WHERE after->>'id' = $1 ORDER BY id`, [
      key.body.id,
    ]);
    expect(keyRows.map((r) => [r.action, r.correlation_id])).toEqual([
      ['api_key.created', 'req-key'],
      ['api_key.revoked', 'req-revoke'],
    ]);
  });

  it('concurrent reservations decided in one batch: each hold.created carries its own request id', async () => {
    const accounts = await Promise.all(Array.from({ length: 6 }, () => fundedAccount(h, admin, { credits: '2.000000' })));
    const reservations = h.app.get(ReservationsService);
    const before = { ...reservations.stats };
    const answers = await Promise.all(
      accounts.flatMap((accountId, a) =>
        [0, 1].map((i) =>
          h.request('POST', '/v1/reservations', {
            key: cp,
            body: { accountId, runtimeId: uid('rt'), ...SMALL },
            headers: { 'x-request-id': `req-${a}-${i}` },
          }),
        ),
      ),
    );
    expect(answers.map((r) => r.status)).toEqual(Array(12).fill(201));
    // Some batch decided several of them (the correlation of the batch is not the one of its launches).
    expect(reservations.stats.decided - before.decided).toBeGreaterThan(reservations.stats.batches - before.batches);
    for (const [a, accountId] of accounts.entries()) {
      const holds = (await auditOf(accountId)).filter((r) => r.action === 'hold.created');
      const byRuntime = new Map(holds.map((r) => [(r.after!.hold as { reference: string }).reference, r.correlation_id]));
      const expected = answers.slice(a * 2, a * 2 + 2).map((r, i) => [r.body.runtimeId as string, `req-${a}-${i}`]);
      expect([...byRuntime].sort()).toEqual(expected.sort());
    }
  });

  it('rows written for a lifecycle event carry the event id, not the id of the request that posted it; no row of the scenario is without one', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '2.000000' });
    const runtimeId = uid('rt');
    expect((await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId, ...SMALL } })).status).toBe(201);
    const started = lifecycle(accountId, runtimeId, 'runtime.started', new Date(Date.now() - 60_000), 1);
    const terminated = lifecycle(accountId, runtimeId, 'runtime.terminated', new Date(), 2, { reason: 'user' });
    const posted = await h.request('POST', '/v1/events', {
      key: cp,
      body: [started, terminated],
      headers: { 'x-request-id': 'req-events' },
    });
    expect(posted.status).toBe(200);
    const settled = (await auditOf(accountId)).filter((r) => r.action === 'hold.settled');
    expect(settled.map((r) => r.correlation_id)).toEqual([terminated.id]);
    // Every row of the account's history: the requests' and the event's ids, none null.
    expect((await auditOf(accountId)).filter((r) => r.correlation_id === null)).toEqual([]);
  });
});
