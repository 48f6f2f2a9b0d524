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

export function reportLedgerWrites(writes: readonly TransactionWrite[]): void {
  if (ledgerWrites.size === 0) return;
  const flows = flowsOf(writes);
  for (const listener of ledgerWrites) listener(flows);
}
