import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { uid } from './app';
import { tempDir } from './temp-dir';

/**
 * A rate-card file: the shipped one, plus a version from `effectiveFrom` on with the ancillary prices
 * given (the shipped first version otherwise). Its folder is removed after the test file's tests.
 */
export function rateCardFileWith(version: string, effectiveFrom: string, ancillary: Record<string, string>): string {
  const shipped = JSON.parse(readFileSync('config/rate-card.json', 'utf8')) as { versions: Record<string, unknown>[] };
  const first = shipped.versions[0]!;
  const path = join(tempDir('rate-card-'), 'rate-card.json');
  writeFileSync(path, JSON.stringify({ ...shipped, versions: [first, { ...first, version, effectiveFrom, ancillary }] }));
  return path;
}

/**
 * A rate-card file: the shipped one, plus a version from `pricedFrom` on that prices the ancillary
 * items (storage at 1,000 µcr per GiB-hour of snapshots and 2,000 of volumes, egress 0.1 credit per GiB,
 * paused memory unpriced). Before `pricedFrom`, the shipped version: all unpriced.
 */
export function pricedRateCardFile(pricedFrom: string): string {
  return rateCardFileWith('test-priced', pricedFrom, {
    snapshot_gib_month: '0.730000',
    disk_gib_month: '1.460000',
    egress_gib: '0.100000',
    paused_ram_gib_hour: 'unpriced',
  });
}

export const GIB = 1024 ** 3;

export function usageEvent(accountId: string, type: string, at: Date, data: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { id: uid('aev'), type, occurredAt: at.toISOString(), accountId, data, ...extra };
}
