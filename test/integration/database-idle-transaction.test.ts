import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { poolOf } from '../../src/common/database/pool';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount, SMALL } from '../support/accounts';
import { uid, type Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import type { StripeFake } from '../support/stripe-fake';

/** Credits as the API writes them (`10.000000`), in micro-credits. */
const micros = (credits: string): bigint => BigInt(credits.replace('.', ''));

/**
 * A transaction the service left open (its instance partitioned away, or stuck) while holding a
 * wallet's lock: PostgreSQL ends it after DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS, so the wallet is
 * usable again in seconds, not once TCP notices the dead peer (hours). The service's own transactions
 * that wait on Stripe inside (the seat sync) still finish.
 */
describe('a transaction left idle', () => {
  const IDLE_MS = 1_000;
  let stripe: StripeApp | undefined;
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let cp: string;

  beforeAll(async () => {
    stripe = await startStripeApp('idle_transaction', 'whsec_test_secret', {
      env: {
        STRIPE_TIMEOUT_MS: '10000',
        DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: String(IDLE_MS),
        // A reservation waiting on the lock fails (503) after this: longer than the idle bound.
        DATABASE_QUERY_TIMEOUT_MS: '5000',
      },
    });
    ({ h, fake, admin } = stripe);
    cp = await h.key('control-plane');
  });
  afterAll(() => stripe?.close());

  it('frees a wallet locked by an abandoned transaction: a reservation on it is held instead of waiting out the partition', async () => {
    const accountId = await fundedAccount(h, admin, { credits: '10.000000' });
    // A connection of the service's own pool (its settings) that locks the wallet, then goes silent.
    const abandoned = await poolOf(h.ds).connect();
    let ended: unknown;
    abandoned.on('error', (error) => (ended ??= error));
    try {
      await abandoned.query('BEGIN');
      await abandoned.query('SELECT 1 FROM wallets WHERE account_id = $1 FOR UPDATE', [accountId]);

      const launch = await h.request('POST', '/v1/reservations', { key: cp, body: { accountId, runtimeId: uid('rt'), ...SMALL } });
      expect(launch.status).toBe(201);
      const wallet = (await h.request('GET', `/v1/accounts/${accountId}/wallet`, { key: admin })).body;
      expect(micros(wallet.held)).toBe(micros(launch.body.reserved));
      expect(wallet.total).toBe('10.000000');
      // The server ended the abandoned session (its transaction rolled back): the service did not.
      expect(String(ended)).toMatch(/terminating connection due to idle-in-transaction timeout/);
    } finally {
      abandoned.release(true);
    }
  });

  it('lets a seat sync whose Stripe call outlasts the idle bound record the quantity it pushed', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status).toBe(201);
    // Stripe answers the seat update after 2.5 s: the seat transaction waits that long with nothing sent.
    fake.delayAfterCommit((m, p) => m === 'POST' && p.startsWith('/v1/subscription_items/'), IDLE_MS * 2.5);
    expect((await h.request('PUT', `/v1/accounts/${accountId}/members/ada`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    const view = (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body;
    expect(view.subscription.seatQuantity).toBe(1);
  });
});
