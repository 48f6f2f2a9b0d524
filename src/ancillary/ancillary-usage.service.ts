import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { ConcurrentChange, inTransaction } from 'src/common/database/transaction';
import type { Finding } from 'src/common/errors/billing.exception';
import { Metrics } from 'src/health/metrics';
import { Clock } from 'src/infra/clock/clock';
import { LedgerService } from 'src/ledger/ledger.service';
import { ancillaryCharge, BYTES_PER_GIB, PRICE_KEY_OF, type AncillaryKind } from 'src/pricing/ancillary-prices';
import { RateCard } from 'src/pricing/rate-card';
import { SpendLimitsService } from 'src/spend-limits/spend-limits.service';
import { firstOfEachId } from 'src/messaging/inbox';
import { ExtraEventsRefused } from 'src/metering/event-extensions';
import type { AfterSettlement, SettledRuntime } from 'src/metering/settlement-hooks';
import type { SizeClass } from 'src/pricing/environment';
import type { AncillaryEvent } from './ancillary-event';
import { postCharge } from './ancillary-ledger';
import {
  chargeId,
  chargesOf,
  insertEvents,
  itemOwners,
  lockItem,
  markAccrued,
  openItems,
  runtimeOwners,
  saveCharge,
  storageEvents,
  touchItems,
  unpaidCharges,
  type ChargeRow,
} from './ancillary.store';
import { handleUnpaidStorage } from './unpaid-storage';
import { UnpricedCounter } from './unpriced-counter';
import { byteMsBetween, hourStart, hoursToCharge, storageEnd, storageSegments } from './core/storage';

export interface AncillaryIngestResult {
  accepted: number;
  duplicates: number;
  refused: { event: AncillaryEvent; findings: Finding[] }[];
}

const HOUR = 3_600_000;

/**
 * Ancillary usage: snapshots and volumes charged per hour of existence (the accrual job), egress per
 * report (when it arrives). Every charge is a function of the set of events (an hour's quantity from
 * all the item's events, whatever their order), recorded with the rate-card version it was metered
 * under, and posted to the wallet through the ledger's operations (`postCharge`). Unpriced usage is
 * recorded with a null price and nothing charged, and counted in `dl_billing_ancillary_unpriced_total`.
 */
@Injectable()
export class AncillaryUsageService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly ledger: LedgerService,
    private readonly card: RateCard,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly spendLimits: SpendLimitsService,
    private readonly unpriced: UnpricedCounter,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** One transaction: the inbox by id (a known id has no effect), the items, egress charged per report. */
  async ingest(events: AncillaryEvent[], opts: { allOrNothing?: boolean } = {}): Promise<AncillaryIngestResult> {
    if (events.length === 0) return { accepted: 0, duplicates: 0, refused: [] };
    const { fresh, refused } = await inTransaction(this.ds, async (em) => {
      const owners = await itemOwners(em, [...new Set(events.map((e) => e.itemKey))]);
      // Egress is reported per runtime: a runtime known to be another account's is not this account's to report.
      const runtimes = await runtimeOwners(em, [
        ...new Set(events.flatMap((e) => (e.kind === 'egress' && e.runtimeId ? [e.runtimeId] : []))),
      ]);
      const ok: AncillaryEvent[] = [];
      const refused: AncillaryIngestResult['refused'] = [];
      // Each copy of an id is checked as in a batch of its own; then the first accepted one is kept.
      for (const e of events) {
        const owner = owners.get(e.itemKey) ?? e.accountId;
        owners.set(e.itemKey, owner);
        const runner = e.kind === 'egress' && e.runtimeId ? (runtimes.get(e.runtimeId) ?? e.accountId) : e.accountId;
        if (owner === e.accountId && runner === e.accountId) ok.push(e);
        else {
          const finding =
            owner !== e.accountId
              ? { field: 'accountId', message: `${e.itemKey.replace(':', ' ')} belongs to another account` }
              : { field: 'runtimeId', message: `runtime ${e.runtimeId} belongs to another account` };
          refused.push({ event: e, findings: [finding] });
        }
      }
      if (refused.length > 0 && opts.allOrNothing) throw new ExtraEventsRefused(refused);
      const fresh = await insertEvents(em, firstOfEachId(ok));
      await touchItems(em, storageItems(fresh));
      // An item another account's first event created meanwhile (after the read above): the retry refuses this one.
      const owned = await itemOwners(em, [...new Set(storageItems(fresh).map((i) => i.itemKey))]);
      const taken = fresh.filter((e) => owned.has(e.itemKey) && owned.get(e.itemKey) !== e.accountId);
      if (taken.length > 0) throw new ConcurrentChange(`${taken[0]!.itemKey} was created meanwhile by another account: retried`);
      // Wallets in account-id order (the lock order of transactions that lock several).
      const egress = fresh
        .filter((f) => f.kind === 'egress')
        .sort((a, b) => byKey(a.accountId, b.accountId) || byKey(a.itemKey, b.itemKey));
      for (const e of egress) {
        const charge = await this.chargeEgress(em, e);
        if (charge.unitPrice === null) this.unpriced.add(em, 'egress', charge.quantity);
      }
      return { fresh, refused };
    });
    this.metrics.ancillaryEvents.inc(fresh.length);
    return { accepted: fresh.length, duplicates: events.length - fresh.length - refused.length, refused };
  }

  /**
   * The hourly accrual (job `ancillary-accrual`): every item not yet charged to its end gets its
   * complete hours charged — from where a late event changed it, else from where the last run
   * stopped — and rows the wallet could not pay are tried again. One transaction per item.
   */
  async accrue(): Promise<{ items: number; hours: number; unpaidRetried: number; notified: number; flagged: number }> {
    const until = hourStart(this.clock.now().getTime());
    let items = 0;
    let hours = 0;
    for (let after = ''; ;) {
      const keys = await openItems(this.ds, 500, after);
      if (keys.length === 0) break;
      for (const key of keys) {
        hours += await inTransaction(this.ds, (em) => this.accrueItem(em, key, until));
        items++;
      }
      after = keys[keys.length - 1]!;
    }
    const unpaidRetried = await this.retryUnpaid();
    const unpaid = await inTransaction(this.ds, (em) => handleUnpaidStorage(em, this.config, this.clock.now()));
    return { items, hours, unpaidRetried, ...unpaid };
  }

  private async accrueItem(em: EntityManager, itemKey: string, until: number): Promise<number> {
    const item = await lockItem(em, itemKey);
    if (!item) return 0;
    const kind = item.kind as AncillaryKind;
    const segments = storageSegments(await storageEvents(em, itemKey));
    const from = (item.changedFrom ?? item.accruedUntil)?.getTime() ?? 0;
    const hours = hoursToCharge(segments, from, until);
    const existing = new Map((await chargesOf(em, itemKey, new Date(from))).map((c) => [c.bucket.getTime(), c]));
    const buckets = [...new Set([...hours, ...[...existing.keys()].filter((b) => b < until)])].sort((a, b) => a - b);
    for (const bucket of buckets) {
      const quantity = byteMsBetween(segments, bucket, bucket + HOUR);
      const before = existing.get(bucket);
      if (!before && quantity === 0n) continue;
      const row = before ?? this.newCharge(item.accountId, kind, itemKey, new Date(bucket), null);
      const delta = quantity - row.quantity;
      if (delta === 0n && row.amount === row.charged) continue;
      await this.settle(
        em,
        { ...row, quantity, amount: row.unitPrice === null ? 0n : ancillaryCharge(kind, row.unitPrice, quantity) },
        row.amount,
      );
      if (row.unitPrice === null) this.unpriced.add(em, kind, delta);
    }
    const end = storageEnd(segments);
    await markAccrued(em, itemKey, new Date(until), segments.length > 0 && end !== null && end <= until);
    return buckets.length;
  }

  /**
   * Paused memory of a runtime settled by its events (metering's settlement hook, in its transaction):
   * the session's closed paused intervals × the memory of its size class (the rate-card version it was
   * reserved under), in byte-ms, one charge row per runtime (`paused_ram:<runtimeId>`, bucket: the
   * termination it was first settled at, priced by the version in effect then). A late event rebuilds
   * the session and brings the row to the new quantity, the ledger corrected like a storage hour.
   */
  async chargePausedMemory(em: EntityManager, s: SettledRuntime): Promise<AfterSettlement | void> {
    const memoryGi = s.sizeClass
      ? (this.card.version(s.rateCardVersion ?? '') ?? this.card.at(s.terminatedAt)).resources[s.sizeClass as SizeClass]?.memoryGi
      : undefined;
    if (memoryGi === undefined) return;
    const itemKey = `paused_ram:${s.runtimeId}`;
    const [before] = s.first ? [] : await chargesOf(em, itemKey, null);
    const quantity = BigInt(Math.round(memoryGi * 1024)) * (BYTES_PER_GIB / 1024n) * BigInt(s.pausedMs);
    if (!before && quantity === 0n) return;
    const row = before ?? this.newCharge(s.accountId, 'paused_ram', itemKey, s.terminatedAt, s.runtimeId);
    if (quantity === row.quantity && row.amount === row.charged) return;
    const amount = row.unitPrice === null ? 0n : ancillaryCharge('paused_ram', row.unitPrice, quantity);
    // The spend check waits for the runtime's row to say settled: until then its spend counts the hold.
    await this.settle(em, { ...row, quantity, amount }, null);
    if (row.unitPrice === null) this.unpriced.add(em, 'paused_ram', quantity - row.quantity);
    if (row.unitPrice !== null && amount !== row.amount) {
      return () => this.spendLimits.notifyThresholds(em, s.accountId, null, this.clock.now());
    }
  }

  /** A new charge row priced by the rate-card version in effect at `priceAt` (the hour's start, or the report's last millisecond). */
  private newCharge(
    accountId: string,
    kind: AncillaryKind,
    itemKey: string,
    bucket: Date,
    runtimeId: string | null,
    priceAt: Date = bucket,
  ): ChargeRow {
    const version = this.card.at(priceAt);
    return {
      id: chargeId(itemKey, bucket),
      accountId,
      kind,
      itemKey,
      bucket,
      runtimeId,
      rateCardVersion: version.version,
      unitPrice: version.ancillary[PRICE_KEY_OF[kind]],
      quantity: 0n,
      amount: 0n,
      charged: 0n,
      holds: [],
    };
  }

  private async chargeEgress(em: EntityManager, e: AncillaryEvent): Promise<ChargeRow> {
    // Counted and priced where its last millisecond falls (`to` is exclusive: a report ending at
    // midnight on the 1st is the month before's, at the month before's price).
    const last = new Date(new Date(String(e.data.to)).getTime() - 1);
    const row = this.newCharge(e.accountId, 'egress', e.itemKey, last, e.runtimeId, last);
    const quantity = e.bytes ?? 0n;
    return this.settle(
      em,
      { ...row, quantity, amount: row.unitPrice === null ? 0n : ancillaryCharge('egress', row.unitPrice, quantity) },
      row.amount,
    );
  }

  /**
   * Posts the row's amount to the ledger (what the wallet can pay) and saves it; `dueBefore`: the row's
   * amount before this change (null: the caller checks the spend limits itself); `unpaidRetry`: a later
   * payment of what the wallet could not pay.
   */
  private async settle(em: EntityManager, row: ChargeRow, dueBefore: bigint | null, unpaidRetry = false): Promise<ChargeRow> {
    const reference = `${row.itemKey}@${row.bucket.toISOString()}`;
    // The row's first payment is dated at the usage (never later than now): a storage hour charged after
    // midnight, an egress report received then, is in the month the usage view and the statement's
    // ancillary table count it. A later payment (of what the wallet could not pay) or a correction is
    // dated when posted, as a runtime's correction is: a month's statement does not change for it.
    const now = this.clock.now();
    const at = row.holds.length === 0 && !unpaidRetry ? new Date(Math.min(row.bucket.getTime(), now.getTime())) : now;
    const posted = await postCharge(em, this.ledger, { ...row, reference }, at);
    const saved = { ...row, charged: posted.charged, holds: posted.holds };
    await saveCharge(em, saved);
    // Ancillary charges count in the account's spend as they are due, paid or not: when what is due
    // changes, its limit's thresholds are checked as after a settlement (a charge the wallet cannot pay
    // warns too; before 2026-12-06 only what the wallet paid did).
    if (row.unitPrice !== null && dueBefore !== null && row.amount !== dueBefore) {
      await this.spendLimits.notifyThresholds(em, row.accountId, null, this.clock.now());
    }
    return saved;
  }

  /** Rows the wallet could not pay in full: paid now as far as it can. */
  private async retryUnpaid(): Promise<number> {
    return inTransaction(this.ds, async (em) => {
      const due = await unpaidCharges(em, 1000);
      for (const row of due) await this.settle(em, row, row.amount, true);
      return due.length;
    });
  }
}

function byKey(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Per stored item, its account, kind and the earliest hour among the new events. */
function storageItems(events: AncillaryEvent[]): { itemKey: string; accountId: string; kind: string; earliestHour: Date }[] {
  const items = new Map<string, { itemKey: string; accountId: string; kind: string; earliestHour: Date }>();
  for (const e of events) {
    if (e.kind === 'egress') continue;
    const hour = new Date(hourStart(e.occurredAt.getTime()));
    const known = items.get(e.itemKey);
    if (!known) items.set(e.itemKey, { itemKey: e.itemKey, accountId: e.accountId, kind: e.kind, earliestHour: hour });
    else if (hour < known.earliestHour) known.earliestHour = hour;
  }
  return [...items.values()];
}
