import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fundedAccount } from '../support/accounts';
import { uid, type Harness } from '../support/app';
import { startStripeApp, type StripeApp } from '../support/stripe-app';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_suspension';

/**
 * An admin's suspension and one for non-payment, placed in either order: each is lifted only by whoever
 * placed it (an admin; the paid invoice). Against the local fake of Stripe, with signed webhooks.
 */
describe("Stripe: an admin's suspension and one for non-payment, in any order", () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let deliver: StripeApp['deliver'];

  beforeAll(async () => {
    // No grace period: a failed payment suspends the account at once.
    ({ h, fake, admin, deliver } = await startStripeApp('stripe_suspension', SECRET, { env: { STRIPE_PAST_DUE_GRACE_MS: '0' } }));
  });
  afterAll(() => h.close().then(() => fake.stop()));

  const accountStatus = async (accountId: string) =>
    (await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body.accountStatus as string;
  const launch = (accountId: string) =>
    h.request('POST', '/v1/reservations', {
      key: admin,
      body: { accountId, runtimeId: uid('rt'), variant: 'datalayer', environment: { name: 'python', sizeClass: 'small' } },
    });
  const refused = async (accountId: string) => {
    const res = await launch(accountId);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({
      error: { code: 'DL_BILLING_ACCOUNT_SUSPENDED', message: `Account ${accountId} is suspended: no new launches` },
    });
  };
  const accepted = async (accountId: string) => expect((await launch(accountId)).status).toBe(201);
  const adminSuspension = async (accountId: string, suspended: boolean) => {
    const res = await h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, {
      key: admin,
      body: { suspended, reason: 'fraud review' },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body as { status: string; suspendedFor: string[] };
  };
  /** A funded Team organization with its subscription created through the API, and its next invoice. */
  const teamAccount = async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'free', kind: 'organization', credits: '100.000000' });
    expect((await h.request('PUT', `/v1/admin/accounts/${accountId}/plan`, { key: admin, body: { plan: 'team' } })).status).toBe(200);
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const subscriptionId = created.body.subscription.id as string;
    // Later than the subscription's creation, whose event the recovery job applies (it is never delivered here).
    const at = Math.floor(Date.now() / 1000) + 5;
    const invoice = fake.invoice(subscriptionId);
    return {
      accountId,
      subscriptionId,
      at,
      failed: () => deliver(fake.emit('invoice.payment_failed', invoice, at)),
      paid: () => deliver(fake.emit('invoice.paid', invoice, at + 1)),
    };
  };

  it("keeps an admin's suspension placed while the account was suspended for non-payment when the invoice is paid", async () => {
    const { accountId, failed, paid } = await teamAccount();
    await failed();
    expect(await accountStatus(accountId)).toBe('suspended');
    expect(await adminSuspension(accountId, true)).toMatchObject({ status: 'suspended', suspendedFor: ['admin', 'non_payment'] });
    await paid();
    expect(await accountStatus(accountId)).toBe('suspended');
    await refused(accountId);
    // The admin lifts it: nothing holds the account any more.
    expect(await adminSuspension(accountId, false)).toMatchObject({ status: 'active', suspendedFor: [] });
    expect(await accountStatus(accountId)).toBe('active');
    await accepted(accountId);
  });

  it("keeps an admin's suspension placed before the failure when the invoice is paid", async () => {
    const { accountId, failed, paid } = await teamAccount();
    expect(await adminSuspension(accountId, true)).toMatchObject({ status: 'suspended', suspendedFor: ['admin'] });
    await failed();
    await paid();
    expect(await accountStatus(accountId)).toBe('suspended');
    await refused(accountId);
    expect(await adminSuspension(accountId, false)).toMatchObject({ status: 'active', suspendedFor: [] });
    await accepted(accountId);
  });

  it('leaves the account suspended for non-payment when an admin lifts theirs while it is past due beyond its grace, in either order', async () => {
    for (const order of ['failure first', 'admin first'] as const) {
      const { accountId, failed, paid } = await teamAccount();
      if (order === 'failure first') await failed();
      expect(await adminSuspension(accountId, true), order).toMatchObject({ status: 'suspended' });
      if (order === 'admin first') await failed();
      const lifted = await adminSuspension(accountId, false);
      expect(lifted, order).toMatchObject({ status: 'suspended', suspendedFor: ['non_payment'] });
      expect(await accountStatus(accountId), order).toBe('suspended');
      await refused(accountId);
      // The recovery job finds it suspended for non-payment already: nothing changes.
      expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).status).toBe(200);
      expect(await accountStatus(accountId), order).toBe('suspended');
      // The payment lifts the rest.
      await paid();
      expect(await accountStatus(accountId), order).toBe('active');
      await accepted(accountId);
    }
  });

  it("leaves the admin's suspension alone after a payment that came when both held the account, whichever came first", async () => {
    for (const order of ['failure first', 'admin first'] as const) {
      const { accountId, failed, paid } = await teamAccount();
      if (order === 'failure first') await failed();
      await adminSuspension(accountId, true);
      if (order === 'admin first') await failed();
      await paid();
      expect(await accountStatus(accountId), order).toBe('suspended');
      await refused(accountId);
      // Suspending again (a double-submitted form) shows it: the admin's alone holds the account now.
      expect(await adminSuspension(accountId, true), order).toMatchObject({ status: 'suspended', suspendedFor: ['admin'] });
      expect(await adminSuspension(accountId, false), order).toMatchObject({ status: 'active', suspendedFor: [] });
      expect(await accountStatus(accountId), order).toBe('active');
      await accepted(accountId);
    }
  });

  const waive = (accountId: string, body: object = { suspended: false, cause: 'non_payment', reason: 'paid by bank transfer' }) =>
    h.request('PUT', `/v1/admin/accounts/${accountId}/suspension`, { key: admin, body });

  it('lets an admin waive a suspension for non-payment, audited, for the rest of that past-due spell; a later spell suspends again', async () => {
    const { accountId, subscriptionId, at, failed, paid } = await teamAccount();
    await failed();
    expect(await accountStatus(accountId)).toBe('suspended');
    const waived = await waive(accountId);
    expect(waived.status, JSON.stringify(waived.body)).toBe(200);
    expect(waived.body).toMatchObject({ accountId, status: 'active', suspendedFor: [] });
    await accepted(accountId);
    const audit = (await h.request('GET', `/v1/audit?accountId=${accountId}`, { key: admin })).body.items as {
      action: string;
      actor: string;
      after: Record<string, unknown>;
    }[];
    expect(audit.find((a) => a.action === 'account.reactivated')).toMatchObject({
      actor: expect.stringMatching(/^key:/),
      after: { status: 'active', suspendedFor: [], cause: 'non_payment', reason: 'paid by bank transfer' },
    });
    // Still past due: the recovery job, and Stripe's next retry failing, leave it active.
    expect((await h.request('POST', '/v1/admin/jobs/stripe-recovery/run', { key: admin })).status).toBe(200);
    await failed();
    expect((await h.request('GET', `/v1/accounts/${accountId}/subscription`, { key: admin })).body).toMatchObject({
      accountStatus: 'active',
      subscription: { status: 'past_due' },
    });
    await accepted(accountId);
    // Paid, then the next invoice fails: a new spell, suspended again.
    await paid();
    await deliver(fake.emit('invoice.payment_failed', fake.invoice(subscriptionId), at + 10));
    expect(await accountStatus(accountId)).toBe('suspended');
    await refused(accountId);
  });

  it("waives only the suspension for non-payment: an admin's own stays", async () => {
    const { accountId, failed } = await teamAccount();
    await failed();
    await adminSuspension(accountId, true);
    const waived = await waive(accountId);
    expect(waived.status).toBe(200);
    expect(waived.body).toMatchObject({ status: 'suspended', suspendedFor: ['admin'] });
    await refused(accountId);
    expect(await adminSuspension(accountId, false)).toMatchObject({ status: 'active', suspendedFor: [] });
    await accepted(accountId);
  });

  it('refuses to place a suspension for non-payment (only Stripe does), and an unknown account, with the contract error bodies', async () => {
    const { accountId, failed } = await teamAccount();
    const placed = await waive(accountId, { suspended: true, cause: 'non_payment', reason: 'late' });
    expect(placed.status).toBe(400);
    expect(placed.body).toEqual({
      error: {
        code: 'DL_BILLING_REQUEST_INVALID',
        message: 'The request is invalid',
        findings: [{ field: 'cause', message: 'a suspension for non-payment is placed by Stripe only: it can only be lifted' }],
      },
    });
    expect(await accountStatus(accountId)).toBe('active');
    const unknown = await waive('acc_nobody_here');
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { code: 'DL_BILLING_NOT_FOUND', message: 'Account acc_nobody_here not found' } });
    // Waiving when nothing holds the account changes nothing, and records nothing for a later spell.
    expect((await waive(accountId)).body).toMatchObject({ status: 'active', suspendedFor: [] });
    await failed();
    expect(await accountStatus(accountId)).toBe('suspended');
  });
});
