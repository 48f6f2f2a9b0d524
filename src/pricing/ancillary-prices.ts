import { z } from 'zod';
import { ceilDiv, parseCredits } from 'src/common/money';

/**
 * The ancillary items the rate card prices, each in its own unit: storage per GiB-month (of 730
 * hours, accrued by the hour), egress per GiB moved, paused runtime memory per GiB-hour.
 */
export const ANCILLARY_PRICE_KEYS = ['snapshot_gib_month', 'disk_gib_month', 'egress_gib', 'paused_ram_gib_hour'] as const;
export type AncillaryPriceKey = (typeof ANCILLARY_PRICE_KEYS)[number];

/** What is metered, and the price each is charged by. */
export const ANCILLARY_KINDS = ['snapshot', 'volume', 'egress', 'paused_ram'] as const;
export type AncillaryKind = (typeof ANCILLARY_KINDS)[number];

export const PRICE_KEY_OF: Readonly<Record<AncillaryKind, AncillaryPriceKey>> = {
  snapshot: 'snapshot_gib_month',
  volume: 'disk_gib_month',
  egress: 'egress_gib',
  paused_ram: 'paused_ram_gib_hour',
};

/** The unit a kind's quantity is shown in (statements, usage). */
export const UNIT_OF: Readonly<Record<AncillaryKind, string>> = {
  snapshot: 'GiB-month',
  volume: 'GiB-month',
  egress: 'GiB',
  paused_ram: 'GiB-hour',
};

export const BYTES_PER_GIB = 1n << 30n;
export const MS_PER_HOUR = 3_600_000n;
/** A month of storage is 730 hours (365 × 24 / 12), whatever the calendar month's length. */
export const HOURS_PER_MONTH = 730n;

/** Price per unit in micro-credits, or null: explicitly not priced (metered and shown, never charged as zero). */
export type AncillaryPrices = Readonly<Record<AncillaryPriceKey, bigint | null>>;

const priceSchema = z.union([
  z.literal('unpriced'),
  z
    .string()
    .regex(/^\d{1,12}\.\d{6}$/, 'must be credits per unit as a decimal string with 6 decimals, e.g. "0.100000", or "unpriced"')
    .transform((text) => parseCredits(text) as bigint),
]);

/** A rate-card version's `ancillary` object: every item a price or "unpriced"; an absent item is unpriced. */
export const ancillaryPricesSchema = z
  .strictObject(
    Object.fromEntries(ANCILLARY_PRICE_KEYS.map((k) => [k, priceSchema.default('unpriced')])) as Record<
      AncillaryPriceKey,
      z.ZodDefault<typeof priceSchema>
    >,
  )
  .default(Object.fromEntries(ANCILLARY_PRICE_KEYS.map((k) => [k, 'unpriced'])) as Record<AncillaryPriceKey, 'unpriced'>)
  .transform((o): AncillaryPrices =>
    Object.freeze(
      Object.fromEntries(ANCILLARY_PRICE_KEYS.map((k) => [k, o[k] === 'unpriced' ? null : o[k]])) as Record<
        AncillaryPriceKey,
        bigint | null
      >,
    ),
  );

/**
 * Byte-milliseconds per unit of a kind (what a quantity is measured in before it is shown): storage
 * a GiB kept 730 hours, paused memory a GiB for an hour; egress is measured in bytes (a GiB).
 */
export function baseUnitsPerUnit(kind: AncillaryKind): bigint {
  switch (kind) {
    case 'snapshot':
    case 'volume':
      return BYTES_PER_GIB * HOURS_PER_MONTH * MS_PER_HOUR;
    case 'paused_ram':
      return BYTES_PER_GIB * MS_PER_HOUR;
    case 'egress':
      return BYTES_PER_GIB;
  }
}

/** The charge for a quantity (byte-ms, or bytes for egress) at a price per unit: rounded up once, never summed from rounded parts. */
export function ancillaryCharge(kind: AncillaryKind, priceMicros: bigint, quantity: bigint): bigint {
  if (quantity <= 0n) return 0n;
  return ceilDiv(priceMicros * quantity, baseUnitsPerUnit(kind));
}

/** A quantity in micro-units of the kind's unit (6 decimals, rounded up), e.g. for "1.500000 GiB-month". */
export function quantityMicros(kind: AncillaryKind, quantity: bigint): bigint {
  if (quantity <= 0n) return 0n;
  return ceilDiv(quantity * 1_000_000n, baseUnitsPerUnit(kind));
}
