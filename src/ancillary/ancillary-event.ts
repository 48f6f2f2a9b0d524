import { z } from 'zod';
import { ACCOUNT_ID_PATTERN } from 'src/common/auth/scopes';
import { messageValidator } from 'src/common/http/zod-validation.pipe';
import type { Finding } from 'src/common/errors/billing.exception';
import { EVENT_EARLIEST, EVENT_TIME_RULE, FUTURE_TOLERANCE_MS } from 'src/common/http/api-schemas';
import { BYTES_PER_GIB, type AncillaryKind } from 'src/pricing/ancillary-prices';

export const ANCILLARY_TYPES = [
  'snapshot.created',
  'snapshot.deleted',
  'volume.created',
  'volume.resized',
  'volume.deleted',
  'egress.reported',
] as const;
export type AncillaryType = (typeof ANCILLARY_TYPES)[number];

const id = z.string().regex(ACCOUNT_ID_PATTERN, 'must be 1-128 characters of letters, digits and _.:-');
const instant = z.iso.datetime({ offset: true, message: 'must be an ISO 8601 date-time' });
const bytes = z.number().int('must be an integer number of bytes').min(0, 'must not be negative').max(Number.MAX_SAFE_INTEGER);
const gib = z.number().positive('must be more than 0').max(1_048_576, 'must be at most 1,048,576 GiB (1 PiB)');

/** The data each type carries (other keys are kept as sent, as for lifecycle events). */
const DATA: Record<AncillaryType, z.ZodType> = {
  'snapshot.created': z.looseObject({ snapshotId: id, sizeBytes: bytes }),
  'snapshot.deleted': z.looseObject({ snapshotId: id }),
  'volume.created': z.looseObject({ volumeId: id, sizeGiB: gib }),
  'volume.resized': z.looseObject({ volumeId: id, sizeGiB: gib }),
  'volume.deleted': z.looseObject({ volumeId: id }),
  'egress.reported': z
    .looseObject({ bytes, from: instant, to: instant })
    .refine((d) => Date.parse(d.from) < Date.parse(d.to), { path: ['to'], message: 'must be after from' }),
};

export function ancillaryEventSchema(now: () => Date) {
  return z
    .strictObject({
      id: z.string().min(1).max(200),
      type: z.enum(ANCILLARY_TYPES),
      occurredAt: instant.refine((v) => {
        const t = Date.parse(v);
        return t >= EVENT_EARLIEST && t <= now().getTime() + FUTURE_TOLERANCE_MS;
      }, EVENT_TIME_RULE),
      accountId: id,
      runtimeId: id.optional(),
      seq: z.number().int('must be an integer').min(0, 'must not be negative').max(Number.MAX_SAFE_INTEGER).default(0),
      data: z.record(z.string(), z.unknown()).default({}),
    })
    .superRefine((e, ctx) => {
      const parsed = DATA[e.type].safeParse(e.data);
      if (!parsed.success) for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, path: ['data', ...issue.path] } as never);
      if (e.type === 'egress.reported' && e.runtimeId === undefined) {
        ctx.addIssue({ code: 'custom', path: ['runtimeId'], message: 'is required for egress.reported (egress is reported per runtime)' });
      }
    });
}

export interface AncillaryEvent {
  id: string;
  type: AncillaryType;
  occurredAt: Date;
  accountId: string;
  runtimeId: string | null;
  seq: number;
  data: Record<string, unknown>;
  kind: AncillaryKind;
  /** `snapshot:<id>`, `volume:<id>`, or `egress:<event id>` (each report its own item). */
  itemKey: string;
  /** Size after the event (created, resized) or the bytes moved (egress); undefined for a deletion. */
  bytes?: bigint;
}

export type AncillaryParseResult = { ok: true; event: AncillaryEvent } | { ok: false; reason: string; findings: Finding[] };

export function isAncillaryType(type: unknown): type is AncillaryType {
  return typeof type === 'string' && (ANCILLARY_TYPES as readonly string[]).includes(type);
}

/** A validator with its schema built once; findings named by field (with `prefix`, e.g. `events[3]`). */
export function ancillaryValidator(now: () => Date): (value: unknown, prefix?: string) => AncillaryParseResult {
  return messageValidator(ancillaryEventSchema(now), (e) => ({
    ...e,
    occurredAt: new Date(e.occurredAt),
    runtimeId: e.runtimeId ?? null,
    ...itemOf(e.type, e.id, e.data),
  }));
}

function itemOf(type: AncillaryType, eventId: string, data: Record<string, unknown>): Pick<AncillaryEvent, 'kind' | 'itemKey' | 'bytes'> {
  switch (type) {
    case 'snapshot.created':
      return { kind: 'snapshot', itemKey: `snapshot:${String(data.snapshotId)}`, bytes: BigInt(data.sizeBytes as number) };
    case 'snapshot.deleted':
      return { kind: 'snapshot', itemKey: `snapshot:${String(data.snapshotId)}` };
    case 'volume.created':
    case 'volume.resized':
      return { kind: 'volume', itemKey: `volume:${String(data.volumeId)}`, bytes: gibToBytes(data.sizeGiB as number) };
    case 'volume.deleted':
      return { kind: 'volume', itemKey: `volume:${String(data.volumeId)}` };
    case 'egress.reported':
      return { kind: 'egress', itemKey: `egress:${eventId}`, bytes: BigInt(data.bytes as number) };
  }
}

/** GiB (possibly fractional, e.g. 0.5) to bytes, exactly for whole and binary fractions, rounded otherwise. */
export function gibToBytes(sizeGiB: number): bigint {
  if (Number.isInteger(sizeGiB)) return BigInt(sizeGiB) * BYTES_PER_GIB;
  return BigInt(Math.round(sizeGiB * Number(BYTES_PER_GIB)));
}
