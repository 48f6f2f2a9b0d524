import { createHash } from 'node:crypto';
import type { EntityManager } from 'typeorm';
import { formatCredits, minBig } from 'src/common/money';
import type { LedgerService } from 'src/ledger/ledger.service';

export interface ChargeHold {
  id: string;
  /** µcr, as a decimal string (JSON). */
  charged: string;
}

export interface PostedCharge {
  charged: bigint;
  holds: ChargeHold[];
}

/**
 * Brings what the ledger has charged for one charge row to `amount`, through the ledger's public
 * operations only (this module never writes ledger tables): more is a hold settled at once for what
 * the wallet can pay (the rest stays due: `amount − charged`, paid by a later run); less is a
 * correction of the row's holds, last first (`adjustSettledHold`, which refunds to the grants the
 * credits came from). Deterministic hold ids and idempotency keys, so a rerun of the same decision
 * writes nothing new. In the caller's transaction, after its own row locks (lock order: ancillary
 * rows → wallet). `at` dates every transaction it posts: the instant of the usage (the row's bucket),
 * so the ledger puts the charge in the month the usage view counts it in.
 */
export async function postCharge(
  em: EntityManager,
  ledger: LedgerService,
  row: { id: string; accountId: string; reference: string; amount: bigint; charged: bigint; holds: ChargeHold[] },
  at: Date,
): Promise<PostedCharge> {
  let charged = row.charged;
  const holds = row.holds.map((h) => ({ ...h }));
  const reason = `ancillary usage ${row.reference}`;
  if (row.amount > charged) {
    await ledger.ensureWallet(em, row.accountId);
    const balance = await ledger.lockWallet(em, row.accountId);
    const pay = minBig(row.amount - charged, balance.available);
    if (pay > 0n) {
      const holdId = `anc_${createHash('md5').update(`${row.id}:${holds.length}`).digest('hex')}`;
      await ledger.createHold(
        em,
        {
          accountId: row.accountId,
          holdId,
          amount: pay,
          reference: row.reference,
          idempotencyKey: `ancillary:${holdId}`,
          actor: 'system:ancillary',
          reason,
        },
        at,
      );
      await ledger.settleHold(em, { holdId, amount: pay, actor: 'system:ancillary', reason }, at);
      holds.push({ id: holdId, charged: pay.toString() });
      charged += pay;
    }
  } else if (row.amount < charged) {
    let refund = charged - row.amount;
    for (let i = holds.length - 1; i >= 0 && refund > 0n; i--) {
      const hold = holds[i]!;
      const was = BigInt(hold.charged);
      const take = minBig(refund, was);
      if (take === 0n) continue;
      const newCharge = was - take;
      await ledger.adjustSettledHold(
        em,
        {
          holdId: hold.id,
          newCharge,
          idempotencyKey: `ancillary-correction:${hold.id}:${newCharge}`,
          actor: 'system:ancillary',
          reason: `${reason}: corrected to ${formatCredits(row.amount)}`,
        },
        at,
      );
      hold.charged = newCharge.toString();
      refund -= take;
      charged -= take;
    }
  }
  return { charged, holds };
}
