import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

/**
 * A local, stateful stand-in for the parts of Stripe's API this service calls: customers, Checkout
 * Sessions, subscriptions and subscription items, invoices (made by the test) and the events list.
 * Bodies are form-encoded like Stripe's (`items[0][price]=…`); `Idempotency-Key` is honoured like
 * Stripe does (same key and same parameters → the first answer again, with `Idempotent-Replayed`;
 * other parameters → 400 idempotency_error; a key over 255 characters → 400). `delayAfterCommit`
 * makes a matching request answer late AFTER its effect is stored, to play a call that timed out
 * although Stripe acted.
 */
type Obj = Record<string, any>;

interface Stored {
  fingerprint: string;
  status: number;
  body: string;
}

export interface FakeRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
  replayed: boolean;
}

const now = (): number => Math.floor(Date.now() / 1000);
const newId = (prefix: string): string => `${prefix}_${randomBytes(10).toString('hex')}`;

function addMonth(seconds: number): number {
  const d = new Date(seconds * 1000);
  const day = d.getUTCDate();
  const next = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1, d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds()));
  const last = new Date(Date.UTC(next.getUTCFullYear(), next.getUTCMonth() + 1, 0)).getUTCDate();
  next.setUTCDate(Math.min(day, last));
  return Math.floor(next.getTime() / 1000);
}

/** Stripe's form encoding back into nested objects (numeric keys → arrays). */
export function parseForm(text: string): Obj {
  const root: Obj = {};
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const parts = rawKey.replace(/\]/g, '').split('[');
    let node: Obj = root;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) {
        node[part] = value;
      } else {
        node[part] ??= /^\d+$/.test(parts[i + 1]!) ? [] : {};
        node = node[part];
      }
    });
  }
  return root;
}

export class StripeFake {
  readonly customers = new Map<string, Obj>();
  readonly sessions = new Map<string, Obj>();
  readonly subscriptions = new Map<string, Obj>();
  readonly invoices = new Map<string, Obj>();
  readonly events: Obj[] = [];
  readonly requests: FakeRequest[] = [];
  private readonly idempotency = new Map<string, Stored>();
  private readonly failures: { match: (method: string, path: string) => boolean; times: number }[] = [];
  private readonly delays: { match: (method: string, path: string) => boolean; ms: number; times: number }[] = [];
  private server: Server | null = null;
  private eventSeq = 0;
  /** Proration lines of quantity changes, per subscription, until its next invoice (Stripe's pending invoice items). */
  readonly pendingProrations = new Map<string, Obj[]>();
  /** While true, every call answers 500 `api_error`, as Stripe during an incident (telling the SDK not to retry). */
  outage = false;
  /** The instant (seconds) quantity changes are prorated at, as Stripe's `proration_date`; now when unset. */
  prorationDate: number | null = null;
  url = '';

  /** `prices`: the unit amount in cents of each price id, as configured in Stripe (invoice lines then carry their amounts). */
  constructor(private readonly prices: Readonly<Record<string, number>> = {}) {}

  /** The service's Stripe settings pointing at this fake, with the webhook signing secret. */
  env(webhookSecret: string): Record<string, string> {
    return { STRIPE_SECRET_KEY: 'sk_test_fake', STRIPE_WEBHOOK_SECRET: webhookSecret, STRIPE_API_URL: this.url };
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** The next `times` requests matching answer `ms` late, after their effect is stored. */
  delayAfterCommit(match: (method: string, path: string) => boolean, ms: number, times = 1): void {
    this.delays.push({ match, ms, times });
  }

  /** The next `times` requests matching answer 500 `api_error` (an incident of those calls only). */
  failNext(match: (method: string, path: string) => boolean, times = 1): void {
    this.failures.push({ match, times });
  }

  /** Writes without an idempotency key (should be none). */
  writesWithoutKey(): FakeRequest[] {
    return this.requests.filter((r) => r.method === 'POST' && !r.idempotencyKey);
  }

  seatItem(subscriptionId: string, seatPriceId: string): Obj {
    const item = this.subscriptions.get(subscriptionId)?.items.data.find((i: Obj) => i.price.id === seatPriceId);
    if (!item) throw new Error(`no seat item on ${subscriptionId}`);
    return item;
  }

  /** A customer and a subscription made directly (as Checkout in subscription mode would). */
  subscribe(prices: { price: string; quantity: number }[], metadata: Record<string, string>): Obj {
    const customer = this.route('POST', '/v1/customers', { metadata }) as Obj;
    return structuredClone(this.route('POST', '/v1/subscriptions', { customer: customer.id, items: prices, metadata }) as Obj);
  }

  /**
   * A Team subscription started through Checkout for `seats` seats (nothing in it names the account),
   * and the completed, paid Checkout Session that does (`client_reference_id`), to send as the event.
   */
  teamCheckout(accountId: string, seats: number): { subscription: Obj; session: Obj } {
    const subscription = this.subscribe(
      [
        { price: 'price_team_base_placeholder', quantity: 1 },
        { price: 'price_team_seat_placeholder', quantity: seats },
      ],
      {},
    );
    const session = {
      id: `cs_test_${randomBytes(6).toString('hex')}`,
      object: 'checkout.session',
      mode: 'subscription',
      status: 'complete',
      payment_status: 'paid',
      client_reference_id: accountId,
      customer: subscription.customer,
      subscription: subscription.id,
      metadata: {},
    };
    return { subscription, session };
  }

  /** Changes a quantity behind the service's back (drift). */
  setQuantity(itemId: string, quantity: number): void {
    for (const s of this.subscriptions.values()) for (const i of s.items.data) if (i.id === itemId) i.quantity = quantity;
  }

  /** The customer pays a Checkout Session: it becomes complete and paid, with a payment intent (and its amount, for priced line items). */
  pay(sessionId: string): Obj {
    const s = this.sessions.get(sessionId);
    if (!s) throw new Error(`no session ${sessionId}`);
    const amounts = ((s.line_items ?? []) as Obj[]).map((i) =>
      this.prices[i.price] === undefined ? null : this.prices[i.price]! * Number(i.quantity ?? 1),
    );
    const amountTotal = amounts.length > 0 && amounts.every((a) => a !== null) ? amounts.reduce((x, y) => x! + y!, 0) : s.amount_total;
    Object.assign(s, {
      status: 'complete',
      payment_status: 'paid',
      payment_intent: s.payment_intent ?? newId('pi'),
      amount_total: amountTotal,
      currency: 'usd',
    });
    return structuredClone(s);
  }

  /** A paid (or failed) invoice for a subscription's cycle, with its base and seat lines. */
  invoice(
    subscriptionId: string,
    opts: { periodStart?: number; periodEnd?: number; created?: number; seatQuantity?: number; billingReason?: string } = {},
  ): Obj {
    const sub = this.subscriptions.get(subscriptionId);
    if (!sub) throw new Error(`no subscription ${subscriptionId}`);
    const first = sub.items.data[0];
    const start = opts.periodStart ?? first.current_period_start;
    const end = opts.periodEnd ?? first.current_period_end;
    const invoice = {
      id: newId('in'),
      object: 'invoice',
      customer: sub.customer,
      created: opts.created ?? now(),
      status: 'open',
      ...(opts.billingReason ? { billing_reason: opts.billingReason } : {}),
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id, metadata: sub.metadata } },
      lines: {
        object: 'list',
        data: [
          ...(this.pendingProrations.get(sub.id) ?? []),
          ...sub.items.data.map((i: Obj) => {
            const quantity = i.price.id === sub.items.data[1]?.price.id && opts.seatQuantity !== undefined ? opts.seatQuantity : i.quantity;
            const amount = typeof i.price.unit_amount === 'number' ? { amount: quantity * i.price.unit_amount, currency: 'usd' } : {};
            return {
              id: newId('il'),
              object: 'line_item',
              quantity,
              ...amount,
              period: { start, end },
              pricing: { price_details: { price: i.price.id, unit_amount_decimal: i.price.unit_amount?.toString() } },
            };
          }),
        ],
      },
      period_start: start,
      period_end: end,
    };
    const amounts = invoice.lines.data.map((l: Obj) => l.amount);
    if (amounts.every((a: unknown) => typeof a === 'number')) {
      Object.assign(invoice, {
        currency: 'usd',
        total: amounts.reduce((x: number, y: number) => x + y, 0),
        amount_paid: amounts.reduce((x: number, y: number) => x + y, 0),
      });
    }
    this.invoices.set(invoice.id, invoice);
    this.pendingProrations.delete(sub.id);
    return structuredClone(invoice);
  }

  /**
   * A quantity change within the cycle, as Stripe prorates it: a credit for the unused time of the old
   * quantity and a charge for the remaining time of the new one, each rounded to the cent, kept for
   * the subscription's next invoice (`always_invoice` is treated the same).
   */
  private prorate(sub: Obj, item: Obj, quantity: number, prorationDate: string | undefined): void {
    const unit = item.price.unit_amount;
    if (typeof unit !== 'number' || quantity === item.quantity) return;
    const at = prorationDate !== undefined ? Number(prorationDate) : (this.prorationDate ?? now());
    const start = item.current_period_start as number;
    const end = item.current_period_end as number;
    const rest = Math.min(1, Math.max(0, (end - at) / (end - start)));
    const line = (q: number, sign: number, what: string) => ({
      id: newId('il'),
      object: 'line_item',
      quantity: q,
      amount: sign * Math.round(q * unit * rest),
      currency: 'usd',
      description: `${what} on ${q} × ${item.price.id} after ${new Date(at * 1000).toISOString()}`,
      period: { start: at, end },
      parent: { type: 'invoice_item_details', invoice_item_details: { invoice_item: newId('ii'), proration: true, subscription: sub.id } },
      pricing: { price_details: { price: item.price.id }, unit_amount_decimal: String(unit) },
    });
    const pending = this.pendingProrations.get(sub.id) ?? [];
    if (item.quantity > 0) pending.push(line(item.quantity, -1, 'Unused time'));
    if (quantity > 0) pending.push(line(quantity, 1, 'Remaining time'));
    this.pendingProrations.set(sub.id, pending);
  }

  /** Records an event (as Stripe would for its own changes) and returns it, to deliver or to leave for recovery. */
  /** An event, recorded for the events list; `id` as given (Stripe's ids are not ordered), else one in emission order. */
  emit(type: string, object: Obj, created = now(), id?: string): Obj {
    const event = {
      id: id ?? `evt_${(++this.eventSeq).toString().padStart(6, '0')}_${randomBytes(6).toString('hex')}`,
      object: 'event',
      api_version: '2026-10-28.endive',
      created,
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
      data: { object: structuredClone(object) },
    };
    this.events.push(event);
    return event;
  }

  /** The Stripe-Signature header of a payload (Stripe's own test helper). */
  static sign(payload: string, secret: string, timestamp?: number): string {
    return Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp !== undefined ? { timestamp } : {}) });
  }

  // ---------------------------------------------------------------- HTTP

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const url = new URL(req.url ?? '/', 'http://fake');
    const method = req.method ?? 'GET';
    const params = method === 'GET' ? parseForm(url.search.slice(1)) : parseForm(Buffer.concat(chunks).toString('utf8'));
    const key = (req.headers['idempotency-key'] as string | undefined) ?? null;
    const log: FakeRequest = { method, path: url.pathname, idempotencyKey: key, replayed: false };
    this.requests.push(log);
    const failure = this.failures.find((f) => f.times > 0 && f.match(method, url.pathname));
    if (failure) failure.times -= 1;
    if (this.outage || failure) {
      res.setHeader('Stripe-Should-Retry', 'false');
      return this.send(res, 500, { error: { type: 'api_error', message: 'An unexpected error occurred (the fake is in an outage)' } });
    }
    if (!String(req.headers.authorization ?? '').startsWith('Bearer ')) {
      return this.send(res, 401, { error: { type: 'invalid_request_error', message: 'No API key provided' } });
    }
    if (key !== null && key.length > 255) {
      return this.send(res, 400, {
        error: { type: 'invalid_request_error', message: 'Idempotency keys can be at most 255 characters long' },
      });
    }
    const fingerprint = createHash('sha256')
      .update(`${method} ${url.pathname} ${JSON.stringify(params)}`)
      .digest('hex');
    if (key && method === 'POST') {
      const stored = this.idempotency.get(key);
      if (stored) {
        log.replayed = true;
        if (stored.fingerprint !== fingerprint) {
          return this.send(res, 400, {
            error: {
              type: 'idempotency_error',
              message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
            },
          });
        }
        res.setHeader('Idempotent-Replayed', 'true');
        return this.sendRaw(res, stored.status, stored.body);
      }
    }
    let status = 200;
    let body: unknown;
    try {
      body = this.route(method, url.pathname, params);
      if (body === undefined) {
        status = 404;
        body = { error: { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${url.pathname})` } };
      }
    } catch (error) {
      status = 400;
      body = { error: { type: 'invalid_request_error', message: error instanceof Error ? error.message : String(error) } };
    }
    const text = JSON.stringify(body);
    if (key && method === 'POST') this.idempotency.set(key, { fingerprint, status, body: text });
    const delay = this.delays.find((d) => d.times > 0 && d.match(method, url.pathname));
    if (delay) {
      delay.times -= 1;
      await new Promise((r) => setTimeout(r, delay.ms));
    }
    if (!res.destroyed) this.sendRaw(res, status, text);
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    this.sendRaw(res, status, JSON.stringify(body));
  }

  private sendRaw(res: ServerResponse, status: number, text: string): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json', 'request-id': newId('req') });
    res.end(text);
  }

  private route(method: string, path: string, p: Obj): unknown {
    const parts = path.split('/').filter(Boolean); // ['v1', resource, id?]
    const [, resource, id, sub] = parts;
    if (method === 'POST' && resource === 'customers' && !id) {
      const customer = { id: newId('cus'), object: 'customer', created: now(), name: p.name ?? null, metadata: p.metadata ?? {} };
      this.customers.set(customer.id, customer);
      return customer;
    }
    if (method === 'POST' && resource === 'checkout' && id === 'sessions' && !sub) {
      const session = {
        id: `cs_test_${randomBytes(12).toString('hex')}`,
        object: 'checkout.session',
        created: now(),
        mode: p.mode,
        status: 'open',
        payment_status: 'unpaid',
        client_reference_id: p.client_reference_id ?? null,
        customer: p.customer ?? null,
        metadata: p.metadata ?? {},
        line_items: p.line_items,
        payment_intent: null,
        subscription: null,
        amount_total: null,
        success_url: p.success_url,
        cancel_url: p.cancel_url,
        url: '',
      };
      session.url = `https://checkout.stripe.test/c/pay/${session.id}`;
      this.sessions.set(session.id, session);
      return session;
    }
    if (method === 'GET' && resource === 'checkout' && id === 'sessions' && sub) return this.sessions.get(sub) ?? undefined;
    if (method === 'POST' && resource === 'subscriptions' && !id) {
      if (!this.customers.has(p.customer)) throw new Error(`No such customer: '${p.customer}'`);
      const created = now();
      const end = addMonth(created);
      const subscription = {
        id: newId('sub'),
        object: 'subscription',
        created,
        customer: p.customer,
        status: 'active',
        billing_cycle_anchor: created,
        metadata: p.metadata ?? {},
        proration_behavior: p.proration_behavior,
        items: {
          object: 'list',
          data: (p.items as Obj[]).map((i) => ({
            id: newId('si'),
            object: 'subscription_item',
            price: {
              id: i.price,
              object: 'price',
              ...(this.prices[i.price as string] !== undefined ? { currency: 'usd', unit_amount: this.prices[i.price as string] } : {}),
            },
            quantity: Number(i.quantity ?? 1),
            current_period_start: created,
            current_period_end: end,
          })),
        },
      };
      subscription.items.data.forEach((i) => Object.assign(i, { subscription: subscription.id }));
      this.subscriptions.set(subscription.id, subscription);
      this.emit('customer.subscription.created', subscription);
      return subscription;
    }
    if (method === 'GET' && resource === 'subscriptions' && id) return this.subscriptions.get(id) ?? undefined;
    if (resource === 'subscription_items' && id) {
      for (const s of this.subscriptions.values()) {
        const item = s.items.data.find((i: Obj) => i.id === id);
        if (!item) continue;
        if (method === 'POST') {
          if (p.quantity !== undefined) {
            const q = Number(p.quantity);
            if (!Number.isInteger(q) || q < 0) throw new Error('Invalid integer: quantity');
            if (p.proration_date !== undefined && Number(p.proration_date) < item.current_period_start) {
              // As Stripe: a proration date before the current period is refused.
              throw new Error('proration_date must be within the current billing period');
            }
            if ((p.proration_behavior ?? 'create_prorations') !== 'none') this.prorate(s, item, q, p.proration_date);
            item.quantity = q;
            this.emit('customer.subscription.updated', s);
          }
        }
        return item;
      }
      return undefined;
    }
    if (method === 'GET' && resource === 'invoices' && id) return this.invoices.get(id) ?? undefined;
    if (method === 'GET' && resource === 'events' && !id) {
      const gte = p.created?.gte !== undefined ? Number(p.created.gte) : 0;
      const limit = Math.min(Number(p.limit ?? 10), 100);
      const all = this.events
        .filter((e) => e.created >= gte)
        .slice()
        .reverse(); // newest first
      const from = p.starting_after ? all.findIndex((e) => e.id === p.starting_after) + 1 : 0;
      const data = all.slice(from, from + limit);
      return { object: 'list', url: '/v1/events', has_more: from + limit < all.length, data };
    }
    return undefined;
  }
}
