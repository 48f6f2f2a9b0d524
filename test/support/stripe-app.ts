import { expect } from 'vitest';
import { startAppOnFreshDatabase, type FreshHarness, type StartOptions } from './app';
import { StripeFake } from './stripe-fake';

/** The app against a local Stripe fake, with an admin key and signed webhook delivery. */
export interface StripeApp {
  h: FreshHarness;
  fake: StripeFake;
  admin: string;
  /** Posts `event` to the webhook, signed with the app's secret, and expects `status`. */
  deliver(event: object, status?: number): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/**
 * Starts a Stripe fake and the app on a database of its own: its live subscriptions are this fake's,
 * which another file's seat reconciliation (on its own fake) cannot read. `prices`: the fake's unit
 * amounts in cents (its invoices and prorations then carry amounts).
 */
export async function startStripeApp(
  prefix: string,
  secret: string,
  opts: StartOptions = {},
  prices: Readonly<Record<string, number>> = {},
): Promise<StripeApp> {
  const fake = await new StripeFake(prices).start();
  const h = await startAppOnFreshDatabase(prefix, { ...opts, env: { ...fake.env(secret), ...opts.env } });
  return {
    h,
    fake,
    admin: await h.key('admin'),
    deliver: async (event, status = 200) => {
      const payload = JSON.stringify(event);
      const res = await h.request('POST', '/v1/stripe/webhooks', {
        body: payload,
        headers: { 'stripe-signature': StripeFake.sign(payload, secret) },
      });
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      return res;
    },
    close: async () => {
      await h.close();
      await fake.stop();
    },
  };
}
