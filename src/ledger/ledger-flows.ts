import { Injectable, type OnModuleDestroy, Optional } from '@nestjs/common';
import { Metrics } from 'src/health/metrics';
import type { TransactionWrite } from './persistence/wallet-store';

/** What a ledger write moves, in micro-credits, by the flow an operator watches. */
export type LedgerFlow = 'reserved' | 'charged' | 'charge_reduced' | 'released' | 'granted' | 'expired' | 'clawed_back';

/**
 * Listeners told of every ledger write the database accepted (the metrics add theirs). Kept out of
 * the ledger's services so that every write path — one operation, a group-committed batch, a
 * claw-back — is seen at the one place they all pass.
 */
export const ledgerWrites = new Set<(flows: Map<LedgerFlow, bigint>) => void>();

/** The flows of `writes`, summed. */
export function flowsOf(writes: readonly TransactionWrite[]): Map<LedgerFlow, bigint> {
  const flows = new Map<LedgerFlow, bigint>();
  const add = (flow: LedgerFlow, amount: bigint | undefined): void => {
    if (amount && amount > 0n) flows.set(flow, (flows.get(flow) ?? 0n) + amount);
  };
  for (const w of writes) {
    add('reserved', w.newHold?.amount);
    if (w.kind === 'grant' || w.kind === 'top-up') add('granted', w.newGrant?.amount);
    if (w.kind === 'expiry') add('expired', -w.amount);
    const clawedBack = w.explanation.clawedBack;
    if (w.kind === 'adjustment' && typeof clawedBack === 'bigint') add('clawed_back', clawedBack);
    for (const h of w.holdUpdates ?? []) {
      // An open hold increased (a reservation's extension) holds more: reserved too.
      add('reserved', h.amount);
      add('charged', h.charged);
      add('charge_reduced', h.charged === undefined ? undefined : -h.charged);
      add('released', h.released);
    }
  }
  return flows;
}

/**
 * The service's metrics told of every committed write (`dl_billing_credits_microcredits_total` by
 * flow): the ledger subscribes them, so the metrics module need not know the ledger.
 */
@Injectable()
export class LedgerFlowMetrics implements OnModuleDestroy {
  private readonly onWrite = (flows: Map<LedgerFlow, bigint>): void => {
    for (const [flow, amount] of flows) this.metrics?.credits.inc({ flow }, Number(amount));
  };

  constructor(@Optional() private readonly metrics?: Metrics) {
    if (metrics) ledgerWrites.add(this.onWrite);
  }

  onModuleDestroy(): void {
    ledgerWrites.delete(this.onWrite);
  }
}

export function reportLedgerWrites(writes: readonly TransactionWrite[]): void {
  if (ledgerWrites.size === 0) return;
  reportLedgerFlows(flowsOf(writes));
}

/** Tells the listeners of flows summed by a set-based writer (the bulk grant), zero flows left out as flowsOf does. */
export function reportLedgerFlows(flows: ReadonlyMap<LedgerFlow, bigint>): void {
  if (ledgerWrites.size === 0) return;
  const moved = new Map([...flows].filter(([, amount]) => amount > 0n));
  for (const listener of ledgerWrites) listener(moved);
}
