import type { DataSource } from 'typeorm';
import { rows } from 'src/common/database/transaction';
import { formatCredits } from 'src/common/money';
import { ANCILLARY_KINDS, quantityMicros, UNIT_OF, type AncillaryKind } from 'src/pricing/ancillary-prices';

/** Ancillary usage metered for buckets (storage hours, egress reports) in a period, by kind and priced or not. */
export interface MeteredAncillary {
  accountId: string;
  kind: AncillaryKind;
  priced: boolean;
  versions: string[];
  /** Byte-ms (storage, paused memory) or bytes (egress). */
  quantity: bigint;
  amount: bigint;
  charged: bigint;
}

/**
 * The one read of metered ancillary usage (`ancillary_charges`, owned by this module) that the usage
 * API, the statements and the reports share: one account, or every account.
 */
export async function meteredAncillary(ds: DataSource, opts: { accountId?: string; from: Date; to: Date }): Promise<MeteredAncillary[]> {
  const found = await rows<{
    account_id: string;
    kind: string;
    priced: boolean;
    versions: string[];
    quantity: string;
    amount: string;
    charged: string;
  }>(
    ds,
    `SELECT account_id, kind, unit_price IS NOT NULL AS priced, array_agg(DISTINCT rate_card_version ORDER BY rate_card_version) AS versions,
       sum(quantity)::text AS quantity, sum(amount)::text AS amount, sum(charged)::text AS charged
     FROM ancillary_charges WHERE ($1::text IS NULL OR account_id = $1) AND bucket >= $2 AND bucket < $3
     GROUP BY account_id, kind, unit_price IS NOT NULL ORDER BY account_id, kind, priced`,
    [opts.accountId ?? null, opts.from, opts.to],
  );
  return found
    .filter((r) => (ANCILLARY_KINDS as readonly string[]).includes(r.kind))
    .map((r) => ({
      accountId: r.account_id,
      kind: r.kind as AncillaryKind,
      priced: r.priced,
      versions: r.versions,
      quantity: BigInt(r.quantity),
      amount: BigInt(r.amount),
      charged: BigInt(r.charged),
    }));
}

/** The JSON form (and the reports' row) of one kind's usage: quantity in its unit, credits due, charged, unpaid. */
export function ancillaryUsageJson(m: MeteredAncillary) {
  return {
    kind: m.kind,
    unit: UNIT_OF[m.kind],
    priced: m.priced,
    quantity: formatCredits(quantityMicros(m.kind, m.quantity)),
    amount: formatCredits(m.amount),
    charged: formatCredits(m.charged),
    unpaid: formatCredits(m.amount - m.charged),
    rateCardVersions: m.versions,
  };
}
