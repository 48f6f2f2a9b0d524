import { ceilDiv, minBig } from 'src/common/money';

export const MS_PER_HOUR = 3_600_000n;
export const MS_PER_MINUTE = 60_000n;

function nonNegativeInteger(value: bigint | number, name: string): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) {
    throw new RangeError(`${name} must be a safe integer, got ${value}`);
  }
  const big = BigInt(value);
  if (big < 0n) throw new RangeError(`${name} must not be negative, got ${big}`);
  return big;
}

/**
 * The charge for running `runningMs` at `ratePerHourMicros`: ceil(rate × ms / 3,600,000) µcr.
 * Call it once over a runtime's whole running time, never per piece: rounding each piece up
 * overcharges by up to 1 µcr per piece.
 */
export function chargeFor(ratePerHourMicros: bigint, runningMs: bigint | number): bigint {
  const rate = nonNegativeInteger(ratePerHourMicros, 'ratePerHourMicros');
  const ms = nonNegativeInteger(runningMs, 'runningMs');
  return ceilDiv(rate * ms, MS_PER_HOUR);
}

/** What a reservation of `minutes` holds: the charge for running all of them, ceil(rate × minutes / 60). */
export function holdFor(ratePerHourMicros: bigint, minutes: bigint | number): bigint {
  return chargeFor(ratePerHourMicros, nonNegativeInteger(minutes, 'minutes') * MS_PER_MINUTE);
}

/** Settling a hold: the charge for the running time, never more than the hold; the rest is released. */
export function settleHold(
  holdMicros: bigint,
  ratePerHourMicros: bigint,
  runningMs: bigint | number,
): { charged: bigint; released: bigint } {
  const hold = nonNegativeInteger(holdMicros, 'holdMicros');
  const charged = minBig(chargeFor(ratePerHourMicros, runningMs), hold);
  return { charged, released: hold - charged };
}
