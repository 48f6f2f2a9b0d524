/**
 * A deliberately simple in-memory ledger: the reference the real LedgerService is checked against
 * (test/integration/ledger-model.test.ts). Plain maps and loops, written from the contract, not
 * from the service's code.
 */

export interface ModelGrant {
  id: string;
  amount: bigint;
  remaining: bigint;
  priority: number;
  expiresAt: Date | null;
  createdAt: Date;
  swept: boolean;
}

export interface ModelHold {
  id: string;
  status: 'reserved' | 'settled' | 'voided' | 'expired';
  amount: bigint;
  settled: bigint;
  released: bigint;
  charged: bigint;
  debt: bigint;
  resolvedAt: Date | null;
  /** Per grant: held into the hold, and the part of the hold's charge that came from it. */
  allocs: Map<string, { held: bigint; charged: bigint }>;
}

export type Refusal = 'insufficient' | 'not_found' | 'invalid';

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

export class LedgerModel {
  readonly grants = new Map<string, ModelGrant>();
  readonly holds = new Map<string, ModelHold>();
  issued = 0n;
  consumed = 0n;
  expired = 0n;
  /** What the wallet owes. */
  debt = 0n;

  private burnOrder(ids: Iterable<string>): ModelGrant[] {
    const never = Number.POSITIVE_INFINITY;
    return [...ids]
      .map((id) => this.grants.get(id)!)
      .sort((a, b) => {
        const ea = a.expiresAt?.getTime() ?? never;
        const eb = b.expiresAt?.getTime() ?? never;
        if (ea !== eb) return ea - eb;
        if (a.priority !== b.priority) return a.priority - b.priority;
        if (a.createdAt.getTime() !== b.createdAt.getTime()) return a.createdAt.getTime() - b.createdAt.getTime();
        return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
      });
  }

  private expiredAt(g: ModelGrant, now: Date): boolean {
    return g.expiresAt !== null && g.expiresAt.getTime() <= now.getTime();
  }

  available(now: Date): bigint {
    if (this.debt > 0n) return 0n;
    let sum = 0n;
    for (const g of this.grants.values()) if (!this.expiredAt(g, now)) sum += g.remaining;
    return sum;
  }

  held(): bigint {
    let sum = 0n;
    for (const h of this.holds.values()) if (h.status === 'reserved') sum += h.amount;
    return sum;
  }

  balance(now: Date): { total: bigint; held: bigint; available: bigint; debt: bigint } {
    const available = this.available(now);
    const held = this.held();
    return { total: available + held - this.debt, held, available, debt: this.debt };
  }

  /** Credits coming back into live grants pay debt first, the oldest settled debt first. */
  private payDebt(grantId: string, amount: bigint, exceptHold?: string): bigint {
    let rest = amount;
    const debtors = [...this.holds.values()]
      .filter((h) => h.debt > 0n && h.id !== exceptHold)
      .sort((a, b) => a.resolvedAt!.getTime() - b.resolvedAt!.getTime() || (a.id < b.id ? -1 : 1));
    for (const h of debtors) {
      if (rest === 0n) break;
      const pay = min(h.debt, rest);
      h.debt -= pay;
      this.debt -= pay;
      const a = h.allocs.get(grantId) ?? { held: 0n, charged: 0n };
      a.charged += pay;
      h.allocs.set(grantId, a);
      rest -= pay;
    }
    return rest;
  }

  /** Returns credits to grants in burn order: expired ones expire, live ones pay debt then refill. */
  private giveBack(parts: { grantId: string; amount: bigint }[], now: Date, exceptHold?: string): void {
    const order = this.burnOrder(parts.map((p) => p.grantId));
    for (const g of order) {
      const amount = parts.find((p) => p.grantId === g.id)!.amount;
      if (amount === 0n) continue;
      if (this.expiredAt(g, now)) {
        this.expired += amount;
        continue;
      }
      g.remaining += this.payDebt(g.id, amount, exceptHold);
    }
  }

  private take(amount: bigint, now: Date): { grantId: string; amount: bigint }[] {
    const parts: { grantId: string; amount: bigint }[] = [];
    let rest = amount;
    for (const g of this.burnOrder(this.grants.keys())) {
      if (rest === 0n) break;
      if (this.expiredAt(g, now) || g.remaining === 0n) continue;
      const t = min(g.remaining, rest);
      g.remaining -= t;
      rest -= t;
      parts.push({ grantId: g.id, amount: t });
    }
    return parts;
  }

  grant(id: string, amount: bigint, expiresAt: Date | null, priority: number, now: Date): void {
    this.issued += amount;
    const g: ModelGrant = { id, amount, remaining: 0n, priority, expiresAt, createdAt: now, swept: false };
    this.grants.set(id, g);
    g.remaining = this.payDebt(id, amount);
  }

  hold(id: string, amount: bigint, now: Date): Refusal | null {
    if (amount > this.available(now)) return 'insufficient';
    const h: ModelHold = {
      id,
      status: 'reserved',
      amount,
      settled: 0n,
      released: 0n,
      charged: 0n,
      debt: 0n,
      resolvedAt: null,
      allocs: new Map(),
    };
    for (const p of this.take(amount, now)) h.allocs.set(p.grantId, { held: p.amount, charged: 0n });
    this.holds.set(id, h);
    return null;
  }

  increase(id: string, amount: bigint, now: Date): Refusal | null {
    const h = this.holds.get(id);
    if (!h) return 'not_found';
    if (h.status !== 'reserved') return 'invalid';
    if (amount > this.available(now)) return 'insufficient';
    for (const p of this.take(amount, now)) {
      const a = h.allocs.get(p.grantId) ?? { held: 0n, charged: 0n };
      a.held += p.amount;
      h.allocs.set(p.grantId, a);
    }
    h.amount += amount;
    return null;
  }

  resolve(
    id: string,
    mode: 'settle' | 'void' | 'expire',
    requested: bigint,
    now: Date,
  ): { charged: bigint; released: bigint; first: boolean } | 'not_found' {
    const h = this.holds.get(id);
    if (!h) return 'not_found';
    if (h.status !== 'reserved') return { charged: h.settled, released: h.released, first: false };
    const charge = mode === 'settle' ? min(requested, h.amount) : 0n;
    let rest = charge;
    const back: { grantId: string; amount: bigint }[] = [];
    for (const g of this.burnOrder(h.allocs.keys())) {
      const a = h.allocs.get(g.id)!;
      const c = min(a.held, rest);
      rest -= c;
      a.charged += c;
      if (a.held - c > 0n) back.push({ grantId: g.id, amount: a.held - c });
    }
    h.status = mode === 'settle' ? 'settled' : mode === 'void' ? 'voided' : 'expired';
    h.settled = charge;
    h.charged = charge;
    h.released = h.amount - charge;
    h.resolvedAt = now;
    this.consumed += charge;
    this.giveBack(back, now);
    return { charged: charge, released: h.released, first: true };
  }

  adjust(id: string, newCharge: bigint, now: Date): { delta: bigint } | Refusal {
    const h = this.holds.get(id);
    if (!h) return 'not_found';
    if (h.status !== 'settled') return 'invalid';
    const charge = min(newCharge, h.amount);
    const delta = charge - h.charged;
    if (delta > 0n) {
      const parts = this.take(delta, now);
      let got = 0n;
      for (const p of parts) {
        const a = h.allocs.get(p.grantId) ?? { held: 0n, charged: 0n };
        a.charged += p.amount;
        h.allocs.set(p.grantId, a);
        got += p.amount;
      }
      h.debt += delta - got;
      this.debt += delta - got;
    } else if (delta < 0n) {
      let rest = -delta;
      const cancel = min(rest, h.debt);
      h.debt -= cancel;
      this.debt -= cancel;
      rest -= cancel;
      const back: { grantId: string; amount: bigint }[] = [];
      for (const g of this.burnOrder([...h.allocs.keys()]).reverse()) {
        if (rest === 0n) break;
        const a = h.allocs.get(g.id)!;
        const give = min(a.charged, rest);
        a.charged -= give;
        rest -= give;
        if (give > 0n) back.push({ grantId: g.id, amount: give });
      }
      this.giveBack(back, now, id);
    }
    this.consumed += delta;
    h.charged = charge;
    return { delta };
  }

  expireGrants(now: Date): void {
    for (const g of this.grants.values()) {
      if (!g.swept && this.expiredAt(g, now)) {
        this.expired += g.remaining;
        g.remaining = 0n;
        g.swept = true;
      }
    }
  }
}
