import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uid } from './app';

/**
 * A rate-card file: the shipped one, plus a version from `pricedFrom` on that prices the ancillary
 * items (storage at 1,000 µcr per GiB-hour of snapshots and 2,000 of volumes, egress 0.1 credit per GiB,
 * paused memory unpriced). Before `pricedFrom`, the shipped version: all unpriced.
 */
export function pricedRateCardFile(pricedFrom: string): string {
  const shipped = JSON.parse(readFileSync('config/rate-card.json', 'utf8')) as { versions: Record<string, unknown>[] };
  const first = shipped.versions[0]!;
  const file = {
    ...shipped,
    versions: [
      first,
      {
        ...first,
        version: 'test-priced',
        effectiveFrom: pricedFrom,
        ancillary: { snapshot_gib_month: '0.730000', disk_gib_month: '1.460000', egress_gib: '0.100000', paused_ram_gib_hour: 'unpriced' },
      },
    ],
  };
  const path = join(mkdtempSync(join(tmpdir(), 'rate-card-')), 'rate-card.json');
  writeFileSync(path, JSON.stringify(file));
  return path;
}

export const GIB = 1024 ** 3;

export function usageEvent(accountId: string, type: string, at: Date, data: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { id: uid('aev'), type, occurredAt: at.toISOString(), accountId, data, ...extra };
}
