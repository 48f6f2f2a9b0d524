/** Credits are integers of micro-credits (1 credit = 1,000,000 µcr); JSON shows them as "12.500000". */
export const MICROS_PER_CREDIT = 1_000_000n;

const CREDITS_PATTERN = /^(-)?(\d{1,12})(?:\.(\d{1,6}))?$/;

/** "12.5" or "12.500000" → 12500000n. Returns undefined when the text is not a decimal amount. */
export function parseCredits(text: string): bigint | undefined {
  const m = CREDITS_PATTERN.exec(text);
  if (!m) return undefined;
  const [, sign, whole = '0', frac = ''] = m;
  const micros = BigInt(whole) * MICROS_PER_CREDIT + BigInt(frac.padEnd(6, '0'));
  return sign ? -micros : micros;
}

/** 12500000n → "12.500000". */
export function formatCredits(micros: bigint): string {
  const negative = micros < 0n;
  const abs = negative ? -micros : micros;
  const whole = abs / MICROS_PER_CREDIT;
  const frac = (abs % MICROS_PER_CREDIT).toString().padStart(6, '0');
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

/** formatCredits in SQL: the credits text ("12.500000", "-0.000001") of an SQL integer expression of micro-credits. */
export function formatCreditsSql(sql: string): string {
  return `(CASE WHEN (${sql}) < 0 THEN '-' ELSE '' END || (abs(${sql}) / 1000000)::text || '.' || lpad((abs(${sql}) % 1000000)::text, 6, '0'))`;
}

/** Converts a pg bigint (returned as a string) to bigint. */
export function toBigInt(value: string | number | bigint | null | undefined): bigint {
  if (value === null || value === undefined) return 0n;
  return BigInt(value);
}

export function ceilDiv(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  if (numerator <= 0n) return -(-numerator / denominator);
  return (numerator + denominator - 1n) / denominator;
}

export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

export function maxBig(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
