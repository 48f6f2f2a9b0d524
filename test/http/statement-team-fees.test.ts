import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SeatsService } from '../../src/stripe/seats.service';
import { fundedAccount } from '../support/accounts';
import { startApp, type Harness } from '../support/app';
import { StripeFake } from '../support/stripe-fake';

const SECRET = 'whsec_test_secret';
const BASE_PRICE = 'price_team_base_placeholder';
const SEAT_PRICE = 'price_team_seat_placeholder';

describe('a Team statement shows the fees Stripe invoiced, in dollars', () => {
  let h: Harness;
  let fake: StripeFake;
  let admin: string;

  beforeAll(async () => {
    // The prices as configured in Stripe: $49 a month base, $15 a seat.
    fake = await new StripeFake({ [BASE_PRICE]: 4900, [SEAT_PRICE]: 1500 }).start();
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

  it('lists the base fee and the seat fee of the paid invoice of the period, equal to its Stripe lines and total', async () => {
    const accountId = await fundedAccount(h, admin, { plan: 'team', kind: 'organization' });
    const created = await h.request('POST', `/v1/admin/accounts/${accountId}/subscription`, { key: admin });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const subscriptionId = created.body.subscription.id as string;
    for (const member of ['alice', 'bob', 'carol']) expect((await h.request('PUT', `/v1/accounts/${accountId}/members/${member}`, { key: admin })).status).toBe(200);
    await h.app.get(SeatsService).idle();
    expect(fake.seatItem(subscriptionId, SEAT_PRICE).quantity).toBe(3);

    const invoice = fake.invoice(subscriptionId, { created: Math.floor(Date.now() / 1000) + 1 });
    const answer = await deliver(fake.emit('invoice.paid', { ...invoice, status: 'paid' }));
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);

    const stripeLine = (price: string) => invoice.lines.data.find((l: { pricing: { price_details: { price: string } } }) => l.pricing.price_details.price === price);
    expect(stripeLine(BASE_PRICE)).toMatchObject({ quantity: 1 });
    expect(stripeLine(SEAT_PRICE)).toMatchObject({ quantity: 3 });

    const periodStart = new Date(invoice.period_start * 1000);
    const period = periodStart.toISOString().slice(0, 7);
    const res = await h.request('GET', `/v1/accounts/${accountId}/statements/${period}`, { key: admin });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const common = { invoiceId: invoice.id, periodStart: periodStart.toISOString(), periodEnd: new Date(invoice.period_end * 1000).toISOString() };
    expect(res.body.fees).toEqual([
      expect.objectContaining({ ...common, description: 'Team base fee', amountCents: stripeLine(BASE_PRICE).amount }),
      expect.objectContaining({ ...common, description: 'Team seats: 3 × $15.00', amountCents: stripeLine(SEAT_PRICE).amount }),
    ]);
    expect(res.body.fees.reduce((sum: number, f: { amountCents: number }) => sum + f.amountCents, 0)).toBe(invoice.amount_paid);
    expect(res.body.creditValue).toEqual({ currency: 'usd', centsPerCredit: expect.any(Number) });

    // The CSV has the same fees in US cents.
    const csv = await h.request('GET', `/v1/accounts/${accountId}/statements/${period}?format=csv`, { key: admin });
    expect(csv.status).toBe(200);
    const rows = String(csv.body).trim().split('\r\n');
    const fees = rows.filter((r) => r.startsWith('fees,'));
    expect(fees).toEqual([
      `fees,"Team base fee (${invoice.id}, paid)",,,,,,,4900`,
      `fees,"Team seats: 3 × $15.00 (${invoice.id}, paid)",,,,,,,4500`,
    ]);

    // The admin console's printable page shows them in dollars.
    const login = await h.app.inject({ method: 'POST', url: '/admin/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `key=${encodeURIComponent(admin)}` });
    const cookie = String(login.headers['set-cookie']).split(';')[0]!;
    const page = await h.app.inject({ method: 'GET', url: `/admin/accounts/${accountId}/statements/${period}`, headers: { cookie } });
    expect(page.statusCode).toBe(200);
    const table = page.body.slice(page.body.indexOf('Fees invoiced by Stripe'));
    expect(table).toContain('$49.00');
    expect(table).toContain('$45.00');
  });
});
