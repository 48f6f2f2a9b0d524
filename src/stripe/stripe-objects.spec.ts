import { describe, expect, it } from 'vitest';
import { readCharge, readInvoice, readSubscription } from './stripe-objects';

const t = (iso: string): number => Date.parse(iso) / 1000;

describe('reading Stripe objects', () => {
  it("takes a subscription's period from its items (current API) or from the top level (older API)", () => {
    const item = {
      id: 'si_1',
      price: { id: 'price_seat' },
      quantity: 3,
      current_period_start: t('2026-12-01T00:00:00Z'),
      current_period_end: t('2027-01-01T00:00:00Z'),
    };
    const current = readSubscription({
      id: 'sub_1',
      customer: 'cus_1',
      status: 'past_due',
      billing_cycle_anchor: t('2026-11-01T00:00:00Z'),
      items: { data: [item] },
    });
    expect(current).toMatchObject({
      status: 'past_due',
      customerId: 'cus_1',
      currentPeriodStart: new Date('2026-12-01T00:00:00Z'),
      currentPeriodEnd: new Date('2027-01-01T00:00:00Z'),
      billingCycleAnchor: new Date('2026-11-01T00:00:00Z'),
      items: [{ id: 'si_1', priceId: 'price_seat', quantity: 3 }],
    });
    const older = readSubscription({
      id: 'sub_1',
      customer: { id: 'cus_1' },
      status: 'weird',
      current_period_start: t('2026-12-01T00:00:00Z'),
      current_period_end: t('2027-01-01T00:00:00Z'),
      items: { data: [{ id: 'si_1', plan: { id: 'price_seat' } }] },
    });
    expect(older).toMatchObject({
      status: 'incomplete',
      customerId: 'cus_1',
      currentPeriodStart: new Date('2026-12-01T00:00:00Z'),
      items: [{ priceId: 'price_seat', quantity: 0 }],
    });
    expect(readSubscription({ object: 'subscription' })).toBeNull();
  });

  it("finds an invoice's subscription and cycle in either shape", () => {
    const period = { start: t('2026-12-01T00:00:00Z'), end: t('2027-01-01T00:00:00Z') };
    const current = readInvoice({
      id: 'in_1',
      parent: { subscription_details: { subscription: 'sub_1', metadata: { accountId: 'acc_1' } } },
      lines: { data: [{ quantity: 2, period, pricing: { price_details: { price: 'price_seat' } } }] },
    });
    expect(current).toMatchObject({
      subscriptionId: 'sub_1',
      periodStart: new Date('2026-12-01T00:00:00Z'),
      lines: [{ priceId: 'price_seat', quantity: 2 }],
      metadata: { accountId: 'acc_1' },
    });
    const older = readInvoice({
      id: 'in_2',
      subscription: 'sub_2',
      lines: { data: [{ quantity: 1, period, price: { id: 'price_base' } }] },
    });
    expect(older).toMatchObject({
      subscriptionId: 'sub_2',
      periodEnd: new Date('2027-01-01T00:00:00Z'),
      lines: [{ priceId: 'price_base' }],
    });
  });

  it("reads an invoice's amounts and prorations, and takes its cycle from a regular line, not a proration", () => {
    const cycle = { start: t('2027-01-01T00:00:00Z'), end: t('2027-02-01T00:00:00Z') };
    const rest = { start: t('2026-12-16T00:00:00Z'), end: t('2027-01-01T00:00:00Z') };
    const invoice = readInvoice({
      id: 'in_3',
      subscription: 'sub_3',
      total: 10150,
      currency: 'usd',
      lines: {
        data: [
          { amount: -1500, quantity: 2, period: rest, description: 'Unused time', price: { id: 'price_seat' }, proration: true },
          {
            amount: 2250,
            quantity: 3,
            period: rest,
            pricing: { price_details: { price: 'price_seat' } },
            parent: { invoice_item_details: { proration: true } },
          },
          {
            amount: 4500,
            quantity: 3,
            period: cycle,
            pricing: { price_details: { price: 'price_seat' } },
            parent: { subscription_item_details: { proration: false } },
          },
        ],
      },
    });
    expect(invoice).toMatchObject({
      billsCycle: true,
      periodStart: new Date('2027-01-01T00:00:00Z'),
      periodEnd: new Date('2027-02-01T00:00:00Z'),
      totalCents: 10150,
      currency: 'usd',
    });
    expect(invoice!.lines).toEqual([
      { priceId: 'price_seat', quantity: 2, amountCents: -1500, proration: true, description: 'Unused time' },
      { priceId: 'price_seat', quantity: 3, amountCents: 2250, proration: true, description: null },
      { priceId: 'price_seat', quantity: 3, amountCents: 4500, proration: false, description: null },
    ]);
  });

  it('bills no cycle with an invoice of prorations only, and the invoice period without lines', () => {
    const rest = { start: t('2026-12-16T00:00:00Z'), end: t('2027-01-01T00:00:00Z') };
    const prorations = readInvoice({
      id: 'in_4',
      subscription: 'sub_4',
      billing_reason: 'subscription_update',
      lines: {
        data: [
          {
            amount: -1500,
            quantity: 2,
            period: rest,
            price: { id: 'price_seat' },
            parent: { subscription_item_details: { proration: true } },
          },
          {
            amount: 2250,
            quantity: 3,
            period: rest,
            price: { id: 'price_seat' },
            parent: { subscription_item_details: { proration: true } },
          },
        ],
      },
    });
    expect(prorations).toMatchObject({ billsCycle: false, periodStart: new Date('2026-12-16T00:00:00Z') });
    const bare = readInvoice({ id: 'in_5', subscription: 'sub_5', period_start: rest.start, period_end: rest.end });
    expect(bare).toMatchObject({
      billsCycle: true,
      periodStart: new Date('2026-12-16T00:00:00Z'),
      periodEnd: new Date('2027-01-01T00:00:00Z'),
    });
  });

  it('reads what a refund or a dispute reverses', () => {
    expect(readCharge({ id: 'ch_1', payment_intent: 'pi_1', amount: 1000, amount_refunded: 250 }, 'refund')).toEqual({
      id: 'ch_1',
      chargeId: 'ch_1',
      paymentIntentId: 'pi_1',
      amount: 1000,
      reversed: 250,
    });
    expect(readCharge({ id: 'dp_1', charge: 'ch_2', payment_intent: { id: 'pi_1' }, amount: 1000 }, 'dispute')).toEqual({
      id: 'dp_1',
      chargeId: 'ch_2',
      paymentIntentId: 'pi_1',
      amount: 1000,
      reversed: 1000,
    });
  });
});
