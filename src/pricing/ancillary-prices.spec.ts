import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from 'src/common/config/config';
import { ancillaryCharge, BYTES_PER_GIB, quantityMicros } from './ancillary-prices';
import { parseRateCard, RateCard } from './rate-card';

const shipped = JSON.parse(readFileSync('config/rate-card.json', 'utf8')) as { bases: unknown; versions: Record<string, unknown>[] };
const first = shipped.versions[0]!;

function problemsOf(json: unknown): string[] {
  try {
    parseRateCard(json, 'r.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('ancillary prices in the rate card', () => {
  it('ships every item explicitly unpriced (the provider record gives no price), never as zero', () => {
    const card = parseRateCard(shipped)[0]!;
    expect(card.ancillary).toEqual({ snapshot_gib_month: null, disk_gib_month: null, egress_gib: null, paused_ram_gib_hour: null });
  });

  it('reads a price or "unpriced" per item, an absent item being unpriced', () => {
    const card = parseRateCard({
      ...shipped,
      versions: [{ ...first, ancillary: { egress_gib: '0.250000', disk_gib_month: 'unpriced' } }],
    })[0]!;
    expect(card.ancillary).toEqual({ snapshot_gib_month: null, disk_gib_month: null, egress_gib: 250_000n, paused_ram_gib_hour: null });
    const { ancillary: _a, ...without } = first;
    expect(parseRateCard({ ...shipped, versions: [without] })[0]!.ancillary.egress_gib).toBeNull();
  });

  it('refuses a price that is neither 6 decimals nor "unpriced", and an unknown item, naming them', () => {
    const problems = problemsOf({ ...shipped, versions: [{ ...first, ancillary: { egress_gib: 0.25, snapshot_gib_month: 'free' } }] });
    expect(problems).toHaveLength(2);
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^r\.json: versions\.0\.ancillary\.snapshot_gib_month: /),
        expect.stringMatching(/^r\.json: versions\.0\.ancillary\.egress_gib: /),
      ]),
    );
    expect(problemsOf({ ...shipped, versions: [{ ...first, ancillary: { cpu_hour: '1.000000' } }] })[0]).toMatch(/versions\.0\.ancillary/);
  });

  it('keeps each version its own prices: a price change is a new version, earlier instants keep the old one', () => {
    const card = new RateCard(
      parseRateCard({
        ...shipped,
        versions: [
          { ...first, ancillary: { egress_gib: 'unpriced' } },
          { ...first, version: 'v2', effectiveFrom: '2027-01-01T00:00:00.000Z', ancillary: { egress_gib: '0.100000' } },
        ],
      }),
    );
    expect(card.at(new Date('2026-12-31T23:59:59.999Z')).ancillary.egress_gib).toBeNull();
    expect(card.at(new Date('2027-01-01T00:00:00.000Z')).ancillary.egress_gib).toBe(100_000n);
  });
});

describe('ancillary charges (exact, rounded up once)', () => {
  const hourMs = 3_600_000n;
  it('charges storage per GiB-month of 730 hours', () => {
    // 10 GiB for 730 hours at 0.100000 credits/GiB-month = 1 credit.
    expect(ancillaryCharge('volume', 100_000n, 10n * BYTES_PER_GIB * 730n * hourMs)).toBe(1_000_000n);
    // 1 GiB for one hour: 100,000 / 730 = 136.98… → 137 µcr.
    expect(ancillaryCharge('snapshot', 100_000n, BYTES_PER_GIB * hourMs)).toBe(137n);
    expect(ancillaryCharge('snapshot', 100_000n, 0n)).toBe(0n);
  });

  it('charges egress per GiB and paused memory per GiB-hour', () => {
    expect(ancillaryCharge('egress', 50_000n, 3n * BYTES_PER_GIB)).toBe(150_000n);
    expect(ancillaryCharge('egress', 50_000n, 1n)).toBe(1n);
    expect(ancillaryCharge('paused_ram', 10_000n, (4n * BYTES_PER_GIB * hourMs) / 2n)).toBe(20_000n);
  });

  it('shows quantities in micro-units of their unit', () => {
    expect(quantityMicros('egress', BYTES_PER_GIB / 2n)).toBe(500_000n);
    expect(quantityMicros('volume', BYTES_PER_GIB * 730n * hourMs)).toBe(1_000_000n);
    expect(quantityMicros('paused_ram', BYTES_PER_GIB * hourMs * 3n)).toBe(3_000_000n);
  });
});
