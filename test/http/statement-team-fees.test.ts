import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount } from '../support/accounts';
import { startApp, type Harness } from '../support/app';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_secret';
const BASE_PRICE = 'price_team_base_placeholder';
const SEAT_PRICE = 'price_team_seat_placeholder';
const TOP_UP_PRICE = 'price_topup_100_placeholder';

type StripeLine = {
  amount: number;
  quantity: number;
  pricing: { price_details: { price: string } };
  parent?: { invoice_item_details?: { proration: boolean } };
};

describe('a statement shows the Team fees Stripe invoiced and the top-ups it charged, in dollars', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;
  let accountId: string;
  let subscriptionId: string;

  beforeAll(async () => {
    // The prices as configured in Stripe: $49 a month base, $15 a seat, $30 the 100-credit top-up.
    fake = await new StripeFake({ [BASE_PRICE]: 4900, [SEAT_PRICE]: 1500, [TOP_UP_PRICE]: 3000 }).start();
    h = await startApp({ env: { ...fake.env(SECRET), STRIPE_TIMEOUT_MS: '1000' } });
    admin = await h.key('admin');
  });
  afterAll(async () => {
    await h.close();
    await fake.stop();
  });

  const deliver = (event: object) => {
    const payload = JSON.stringify(event);
    return h.request('POST', '/v1/stripe/webhooks', { body: payload, headers: { 'stripe-signature': StripeFake.sign(payload, SECRET) } });
  };
  /** The invoice paid through a signed `invoice.paid` webhook. */
  const paid = async (invoice: Record<string, any>) => {
    const answer = await deliver(fake.emit('invoice.paid', { ...invoice, status: 'paid' }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  };
  const statementOf = async (invoice: Record<string, any>) => {
    const period = new Date(invoice.period_start * 1000).toISOString().slice(0, 7);
    const res = await h.request('GET', `/v1/accounts/${accountId}/statements/${period}`, { key: admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return { period, body: res.body };
  };
  const sumOf = (lines: StripeLine[]) => lines.reduce((sum, l) => sum + l.amount, 0);
  const linesOf = (invoice: Record<string, any>, price: string) =>
    (invoice.lines.data as StripeLine[]).filter((l) => l.pricing.price_details.price === price);
  const consolePage = async (url: string) => {
    const cookie = await h.consoleSession(admin);
    const page = await h.app.inject({ method: 'GET', url, headers: { cookie } });
    expect(page.statusCode).toBe(200);
    return page.body;
  };
  const adminPage = async (period: string) => {
    const page = await consolePage(`/admin/accounts/${accountId}/statements/${period}`);
    return page.slice(page.indexOf('Fees invoiced by Stripe'));
  };

  it('lists the base fee and the seat fee of the paid invoice of the period, equal to its Stripe lines and total', async () => {
    accountId = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    for (const member of ['alice', 'bob', 'carol']) {
      expect((await h.request('PUT', `/v1/accounts/${accountId}/members/${member}`, { key: admin })).status).toBe(200);
    }
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    subscriptionId = created.body.subscription.id as string;
    await h.app.get(SeatsService).idle();
    expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity).toBe(3);

    const invoice = fake.invoice(subscriptionId, { created: Math.floor(Date.now() / 1000) + 1 });
    await paid(invoice);
    expect(linesOf(invoice, BASE_PRICE)).toMatchObject([{ quantity: 1, amount: 4900 }]);
    expect(linesOf(invoice, SEAT_PRICE)).toMatchObject([{ quantity: 3, amount: 4500 }]);

    const { period, body } = await statementOf(invoice);
    const common = {
      invoiceId: invoice.id,
      periodStart: new Date(invoice.period_start * 1000).toISOString(),
      periodEnd: new Date(invoice.period_end * 1000).toISOString(),
    };
    expect(body.fees).toEqual([
      expect.objectContaining({ ...common, description: 'Team base fee', amountCents: 4900 }),
      expect.objectContaining({ ...common, description: 'Team seats: 3 × $15.00', amountCents: 4500 }),
    ]);
    expect(body.fees.reduce((sum: number, f: { amountCents: number }) => sum + f.amountCents, 0)).toBe(invoice.amount_paid);
    expect(body.creditValue).toEqual({ currency: 'usd', centsPerCredit: expect.any(Number) });

    // The CSV has the same fees in US cents.
    const csv = await h.request('GET', `/v1/accounts/${accountId}/statements/${period}?format=csv`, { key: admin });
    expect(csv.status).toBe(200);
    const fees = String(csv.body)
      .trim()
      .split('\r\n')
      .filter((r) => r.startsWith('fees,'));
    expect(fees).toEqual([
      `fees,"Team base fee (${invoice.id}, paid)",,,,,,,4900,,,`,
      `fees,"Team seats: 3 × $15.00 (${invoice.id}, paid)",,,,,,,4500,,,`,
    ]);

    // The admin console's printable page shows them in dollars.
    const table = await adminPage(period);
    expect(table).toContain('$49.00');
    expect(table).toContain('$45.00');
  });

  it('shows the seat fee Stripe invoiced with its prorations, not the seat price × seats, after a seat added mid-cycle', async () => {
    // A fourth member half-way through the cycle: Stripe prorates 3 → 4 seats for the half left (from the
    // change's date, which the push carries). The cycle, as Stripe has it, is moved to be half over now.
    const half = 30 * 86_400;
    const now = Math.floor(Date.now() / 1000);
    for (const i of fake.subscriptions.get(subscriptionId)!.items.data) {
      Object.assign(i, { current_period_start: now - half, current_period_end: now + half });
    }
    const cycleEnd = now + half;
    expect((await h.request('PUT', `/v1/accounts/${accountId}/members/dave`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity).toBe(4);

    // The next cycle's invoice: the prorations (−$22.50 unused on 3 seats, +$30.00 for 4) and 4 seats.
    const next = fake.invoice(subscriptionId, {
      periodStart: cycleEnd,
      periodEnd: cycleEnd + 30 * 86_400,
      created: Math.floor(Date.now() / 1000) + 2,
    });
    await paid(next);
    const seatLines = linesOf(next, SEAT_PRICE);
    expect(seatLines.map((l) => [l.quantity, l.amount, l.parent?.invoice_item_details?.proration ?? false])).toEqual([
      [3, -2250, true],
      [4, 3000, true],
      [4, 6000, false],
    ]);

    const { period, body } = await statementOf(next);
    expect(
      body.fees.map((f: { invoiceId: string; description: string; amountCents: number }) => [f.invoiceId, f.description, f.amountCents]),
    ).toEqual([
      [next.id, 'Team base fee', sumOf(linesOf(next, BASE_PRICE))],
      [next.id, 'Team seats: 4 × $15.00, prorations +$7.50', sumOf(seatLines)],
    ]);
    // What Stripe invoiced for seats ($67.50) is not the seat price × seats ($60.00); the fees add up to what was paid.
    expect(sumOf(seatLines)).toBe(6750);
    expect(body.fees.reduce((sum: number, f: { amountCents: number }) => sum + f.amountCents, 0)).toBe(next.amount_paid);
    const table = await adminPage(period);
    expect(table).toContain('$67.50');
    // The account page's billing history shows the invoice's total as Stripe invoiced it ($49 + $67.50).
    expect(next.total).toBe(11650);
    expect(await consolePage(`/admin/accounts/${accountId}`)).toContain('$116.50');
    // So does the seats report's invoicedCents for the cycle's month.
    const from = new Date(next.period_start * 1000);
    const to = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth() + 1, 1));
    const report = await h.request('GET', `/v1/reports/seats?from=${period}-01T00:00:00Z&to=${to.toISOString()}`, { key: admin });
    expect(report.status, JSON.stringify(report.body)).toBe(200);
    expect(report.body.items.find((i: { account: string }) => i.account === accountId)).toMatchObject({
      invoicesPaid: 1,
      invoicedCents: 11650,
    });
  });

  it('lists a top-up bought in the period with its credits and what Stripe Checkout charged for it', async () => {
    const started = await h.request('POST', `/v1/accounts/${accountId}/top-ups`, { key: admin, body: { pack: 'credits-100' } });
    expect(started.status, JSON.stringify(started.body)).toBe(201);
    const session = fake.pay(started.body.sessionId);
    const answer = await deliver(fake.emit('checkout.session.completed', session));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);

    const period = new Date().toISOString().slice(0, 7);
    const res = await h.request('GET', `/v1/accounts/${accountId}/statements/${period}`, { key: admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.topUps).toEqual([
      { sessionId: session.id, pack: 'credits-100', credits: '100.000000', amountCents: session.amount_total, at: expect.any(String) },
    ]);
    expect(session.amount_total).toBe(3000);
    expect(res.body.lines).toContainEqual(expect.objectContaining({ section: 'top_ups', credits: '100.000000', count: 1 }));
    const csv = await h.request('GET', `/v1/accounts/${accountId}/statements/${period}?format=csv`, { key: admin });
    expect(String(csv.body)).toContain(`top_up_purchases,Top-up credits-100 (${session.id}),,,,,,100.000000,3000`);
    const page = await consolePage(`/admin/accounts/${accountId}/statements/${period}`);
    expect(page.slice(page.indexOf('Top-ups bought'))).toContain('$30.00');
  });
});
