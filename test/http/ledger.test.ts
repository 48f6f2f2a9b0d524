import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { LedgerService } from '../../src/ledger/ledger.service';
import { startApp, uid, type Harness } from '../support/app';

const AMOUNT = /^-?\d+\.\d{6}$/;

describe('ledger HTTP API: accounts, grants, wallet, ledger, audit', () => {
  let h: Harness;
  let admin: string;
  let ledger: LedgerService;
  const clock = new ManualClock(new Date('2026-12-02T09:00:00.000Z'));

  beforeAll(async () => {
    h = await startApp({ clock });
    admin = await h.key('admin');
    ledger = h.app.get(LedgerService);
  });
  afterAll(() => h.close());

  async function account(id = uid('acc')): Promise<string> {
    // Enterprise without included credits: the wallet holds only what a test grants.
    const res = await h.request('POST', '/v1/accounts', { key: admin, body: { id, kind: 'user', plan: 'enterprise' } });
    expect(res.status).toBe(201);
    return id;
  }

  describe('POST /v1/accounts', () => {
    it('creates (201) with an empty wallet, then updates (200)', async () => {
      const cp = await h.key('control-plane');
      const id = uid('acc');
      const created = await h.request('POST', '/v1/accounts', { key: cp, body: { id, kind: 'organization', plan: 'team', name: 'Acme' } });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({ id, kind: 'organization', plan: 'team', name: 'Acme', status: 'active' });
      const wallet = await h.request('GET', `/v1/accounts/${id}/wallet`, { key: cp });
      expect(wallet.status).toBe(200);
      expect(wallet.body).toMatchObject({ total: '0.000000', held: '0.000000', available: '0.000000', grants: [] });

      const updated = await h.request('POST', '/v1/accounts', { key: cp, body: { id, kind: 'organization', plan: 'enterprise' } });
      expect(updated.status).toBe(200);
      expect(updated.body).toMatchObject({ id, plan: 'enterprise', name: 'Acme' });
      const audit = await h.request('GET', `/v1/audit?accountId=${id}`, { key: admin });
      expect(audit.body.items.map((r: { action: string }) => r.action)).toEqual(['account.updated', 'account.created']);
      expect(audit.body.items[0]).toMatchObject({
        before: { plan: 'team' },
        after: { plan: 'enterprise' },
        actor: expect.stringMatching(/^key:/),
      });
    });

    it('creates an account sent several times at once once: one 201, the others 200, one account.created', async () => {
      const id = uid('acc');
      const body = { id, kind: 'organization', plan: 'free', name: 'Twice' };
      const sent = await Promise.all(Array.from({ length: 6 }, () => h.request('POST', '/v1/accounts', { key: admin, body })));
      expect(sent.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
      const audit = await h.request('GET', `/v1/audit?accountId=${id}`, { key: admin });
      expect(audit.body.items.map((r: { action: string }) => r.action).filter((a: string) => a.startsWith('account.'))).toEqual([
        'account.created',
      ]);
      // The Free allowance is granted once.
      expect((await h.request('GET', `/v1/accounts/${id}/wallet`, { key: admin })).body.grants).toHaveLength(1);
    });

    it('lists every finding with its field, and refuses keys without the scope', async () => {
      const bad = await h.request('POST', '/v1/accounts', { key: admin, body: { id: 'no spaces', kind: 'robot', plan: 'gold', extra: 1 } });
      expect(bad.status).toBe(400);
      expect(bad.body.error.code).toBe('DL_BILLING_REQUEST_INVALID');
      expect(bad.body.error.findings.map((f: { field: string }) => f.field).sort()).toEqual(['extra', 'id', 'kind', 'plan']);
      const reports = await h.key('reports');
      const forbidden = await h.request('POST', '/v1/accounts', { key: reports, body: { id: uid('acc'), kind: 'user', plan: 'free' } });
      expect(forbidden.status).toBe(403);
      expect(forbidden.body.error.code).toBe('DL_BILLING_FORBIDDEN');
    });
  });

  describe('POST /v1/admin/accounts/{id}/grants', () => {
    it('grants credits (201) and answers the same request under the same Idempotency-Key with the same grant (200)', async () => {
      const id = await account();
      const body = { credits: '10.500000', reason: 'goodwill', expiresAt: '2027-01-01T00:00:00.000Z' };
      const first = await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
        key: admin,
        body,
        headers: { 'idempotency-key': 'grant-1' },
      });
      expect(first.status).toBe(201);
      expect(first.body).toMatchObject({
        grant: {
          id: expect.any(String),
          source: 'admin',
          amount: '10.500000',
          remaining: '10.500000',
          expiresAt: '2027-01-01T00:00:00.000Z',
        },
        balance: { total: '10.500000', held: '0.000000', available: '10.500000' },
      });
      const again = await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
        key: admin,
        body,
        headers: { 'idempotency-key': 'grant-1' },
      });
      expect(again.status).toBe(200);
      expect(again.body.grant.id).toBe(first.body.grant.id);
      const wallet = await h.request('GET', `/v1/accounts/${id}/wallet`, { key: admin });
      expect(wallet.body.total).toBe('10.500000');
    });

    it('takes every Idempotency-Key of 1-255 visible characters, the longest too, once each', async () => {
      const id = await account();
      const grant = (key: string, credits = '1.000000') =>
        h.request('POST', `/v1/admin/accounts/${id}/grants`, {
          key: admin,
          body: { credits, reason: 'long key' },
          headers: { 'idempotency-key': key },
        });
      // 255 and 254 characters that differ only at the end: two grants, each replayed.
      const longest = 'k'.repeat(254) + 'a';
      const other = 'k'.repeat(254) + 'b';
      expect((await grant(longest)).status).toBe(201);
      expect((await grant(other)).status).toBe(201);
      expect((await grant(longest)).status).toBe(200);
      expect((await grant(longest, '2.000000')).status).toBe(409);
      expect((await h.request('GET', `/v1/accounts/${id}/wallet`, { key: admin })).body.total).toBe('2.000000');
      const tooLong = await grant('k'.repeat(256));
      expect(tooLong.status).toBe(400);
      expect(tooLong.body.error.findings).toEqual([expect.objectContaining({ field: 'Idempotency-Key' })]);
    });

    it('refuses a different request under a used key with 409 DL_BILLING_IDEMPOTENCY_CONFLICT', async () => {
      const id = await account();
      const headers = { 'idempotency-key': 'grant-2' };
      await h.request('POST', `/v1/admin/accounts/${id}/grants`, { key: admin, body: { credits: '1.000000', reason: 'a' }, headers });
      const conflict = await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
        key: admin,
        body: { credits: '2.000000', reason: 'a' },
        headers,
      });
      expect(conflict.status).toBe(409);
      expect(conflict.body).toEqual({
        error: { code: 'DL_BILLING_IDEMPOTENCY_CONFLICT', message: 'This idempotency key was already used for a different request' },
      });
      expect((await h.request('GET', `/v1/accounts/${id}/wallet`, { key: admin })).body.total).toBe('1.000000');
    });

    it('grants again without an Idempotency-Key, and lists every finding of a bad body', async () => {
      const id = await account();
      for (let i = 0; i < 2; i++) {
        expect(
          (
            await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
              key: admin,
              body: { credits: '1', reason: 'x', source: 'promotion' },
            })
          ).status,
        ).toBe(201);
      }
      expect((await h.request('GET', `/v1/accounts/${id}/wallet`, { key: admin })).body.total).toBe('2.000000');
      const bad = await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
        key: admin,
        body: { credits: '1.1234567', expiresAt: 'soon', source: 'gift' },
      });
      expect(bad.status).toBe(400);
      expect(bad.body.error.findings.map((f: { field: string }) => f.field).sort()).toEqual(['credits', 'expiresAt', 'reason', 'source']);
      const zero = await h.request('POST', `/v1/admin/accounts/${id}/grants`, { key: admin, body: { credits: '0.000000', reason: 'x' } });
      expect(zero.body.error.findings).toEqual([{ field: 'credits', message: 'must be more than 0' }]);
      const past = await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
        key: admin,
        body: { credits: '1', reason: 'x', expiresAt: '2020-01-01T00:00:00Z' },
      });
      expect(past.status).toBe(400);
      expect(past.body.error.findings).toEqual([{ field: 'expiresAt', message: 'must be in the future' }]);
    });

    it('404s an unknown account and 403s a non-admin key', async () => {
      const missing = await h.request('POST', '/v1/admin/accounts/nobody/grants', { key: admin, body: { credits: '1', reason: 'x' } });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('DL_BILLING_NOT_FOUND');
      const cp = await h.key('control-plane');
      expect((await h.request('POST', '/v1/admin/accounts/nobody/grants', { key: cp, body: { credits: '1', reason: 'x' } })).status).toBe(
        403,
      );
    });
  });

  describe('GET /v1/accounts/{id}/wallet and /ledger', () => {
    it('shows balances, grants in burn order, spend and runs; the ledger explains every entry, newest first', async () => {
      const id = await account();
      await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
        key: admin,
        body: { credits: '5', reason: 'top-up', source: 'top_up' },
      });
      await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
        key: admin,
        body: { credits: '3', reason: 'allowance', source: 'plan_allowance', expiresAt: '2027-01-01T00:00:00Z' },
      });
      await ledger.createHoldTx({ accountId: id, holdId: `h_${id}`, amount: 4_000_000n, reference: 'rt_1', idempotencyKey: 'h1' });
      await ledger.settleHoldTx({ holdId: `h_${id}`, amount: 1_250_000n });

      // Through the typed client, with the account's own key.
      const api = h.client(await h.key(`account:${id}`));
      const path = { id };
      const wallet = await api.GET('/v1/accounts/{id}/wallet', { params: { path } });
      expect(wallet.response.status).toBe(200);
      if (!wallet.data) throw new Error('no wallet');
      expect(wallet.data).toMatchObject({ total: '6.750000', held: '0.000000', available: '6.750000' });
      expect(wallet.data.grants.map((g) => [g.source, g.remaining, g.expiresAt])).toEqual([
        ['plan_allowance', '1.750000', '2027-01-01T00:00:00.000Z'],
        ['top_up', '5.000000', null],
      ]);
      // The spend-limits module may fill `spend` in (its own view of the month's charges); the shape stays.
      expect(wallet.data.spend).toMatchObject({
        period: 'month',
        spent: expect.stringMatching(AMOUNT),
        held: expect.stringMatching(AMOUNT),
      });
      expect(wallet.data).toHaveProperty('runs');

      const page1 = (await api.GET('/v1/accounts/{id}/ledger', { params: { path, query: { limit: 2 } } })).data;
      if (!page1) throw new Error('no ledger page');
      expect(page1.items.map((e) => e.kind)).toEqual(['settlement', 'reservation']);
      const settlement = page1.items[0]!;
      expect(settlement).toMatchObject({ amount: '-1.250000', balanceAfter: '6.750000', reference: 'rt_1', at: expect.any(String) });
      expect(settlement.explanation).toMatch(/Charged 1\.250000 of 4\.000000 credits held for rt_1.*2\.750000 released/);
      expect(page1.items[1]!.explanation).toMatch(/Reserved 4\.000000 credits for rt_1.*3\.000000 from plan allowance grant/);
      for (const e of page1.items) expect(e.amount).toMatch(AMOUNT);
      const page2 = (await api.GET('/v1/accounts/{id}/ledger', { params: { path, query: { limit: 2, cursor: page1.nextCursor! } } })).data;
      expect(page2?.items.map((e) => e.kind)).toEqual(['grant', 'top-up']);
      expect(page2?.items[1]!.explanation).toMatch(/^Top-up: 5\.000000 credits, not expiring/);
      expect(page2?.nextCursor).toBeNull();
    });

    it('keeps each account to its own data and 404s unknown accounts', async () => {
      const id = await account();
      const other = await account();
      const own = await h.key(`account:${id}`);
      expect((await h.request('GET', `/v1/accounts/${other}/wallet`, { key: own })).status).toBe(403);
      expect((await h.request('GET', `/v1/accounts/${other}/ledger`, { key: own })).status).toBe(403);
      expect((await h.request('GET', `/v1/accounts/${id}/wallet`)).status).toBe(401);
      const missing = await h.request('GET', '/v1/accounts/nobody/wallet', { key: admin });
      expect(missing.status).toBe(404);
      expect(missing.body.error.code).toBe('DL_BILLING_NOT_FOUND');
      expect((await h.request('GET', '/v1/accounts/nobody/ledger', { key: admin })).status).toBe(404);
      const bad = await h.request('GET', `/v1/accounts/${id}/ledger?cursor=abc&limit=0`, { key: own });
      expect(bad.status).toBe(400);
      expect(bad.body.error.findings.map((f: { field: string }) => f.field).sort()).toEqual(['cursor', 'limit']);
      const unknown = await h.request('GET', `/v1/accounts/${id}/ledger?page=2`, { key: own });
      expect(unknown.body.error.findings).toEqual([{ field: 'page', message: 'is not a parameter of this endpoint' }]);
    });
  });

  describe('GET /v1/audit', () => {
    it('lets admin and reports read, filtered by account and time, newest first, with cursor paging', async () => {
      const id = await account();
      for (let i = 0; i < 3; i++) {
        await h.request('POST', `/v1/admin/accounts/${id}/grants`, {
          key: admin,
          body: { credits: '1', reason: `r${i}` },
          headers: { 'x-request-id': `req-${i}` },
        });
      }
      const reports = await h.key('reports');
      const page = await h.request('GET', `/v1/audit?accountId=${id}&limit=2`, { key: reports });
      expect(page.status).toBe(200);
      expect(page.body.items.map((r: { action: string; after: { reason?: string } }) => [r.action, r.after.reason])).toEqual([
        ['credits.granted', 'r2'],
        ['credits.granted', 'r1'],
      ]);
      expect(page.body.items[0]).toMatchObject({
        accountId: id,
        chain: id,
        correlationId: 'req-2',
        hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      const rest = await h.request('GET', `/v1/audit?accountId=${id}&cursor=${page.body.nextCursor}`, { key: reports });
      expect(rest.body.items.map((r: { action: string }) => r.action)).toEqual(['credits.granted', 'account.created']);
      const future = await h.request('GET', `/v1/audit?accountId=${id}&from=2030-01-01T00:00:00Z`, { key: reports });
      expect(future.body.items).toEqual([]);
      const cp = await h.key('control-plane');
      expect((await h.request('GET', '/v1/audit', { key: cp })).status).toBe(403);
      const bad = await h.request('GET', '/v1/audit?from=yesterday', { key: admin });
      expect(bad.body.error.findings).toEqual([{ field: 'from', message: 'must be an ISO 8601 date-time' }]);
      const unknown = await h.request('GET', '/v1/audit?from=yesterday&bogus=1', { key: admin });
      expect(unknown.body.error.findings).toEqual(
        expect.arrayContaining([
          { field: 'bogus', message: 'is not a parameter of this endpoint' },
          { field: 'from', message: 'must be an ISO 8601 date-time' },
        ]),
      );
      expect(unknown.body.error.findings).toHaveLength(2);
    });
  });
});
