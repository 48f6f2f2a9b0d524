import { z } from 'zod';
import { ancillaryEventSchema } from 'src/ancillary/ancillary-event';
import { lifecycleEventSchema, TERMINATION_REASONS } from '../lifecycle-event';

/** Events per request to POST /v1/events. */
export const MAX_EVENTS = 10_000;

/** The event as published on `runtime.lifecycle.v1` (the refinements that need the clock are described, not shown). */
export const lifecycleEventDocSchema = lifecycleEventSchema(() => new Date()).meta({
  id: 'LifecycleEvent',
  description:
    '`runtime.terminated` needs `data.reason` (one of ' +
    TERMINATION_REASONS.join(', ') +
    '); `runtime.launch_failed` needs a `data.reason` string. `occurredAt` is after 2000-01-01 and at most 24 hours ahead. `id` is the dedup key, forever.',
});

/** Ancillary usage (snapshots, volumes, egress), accepted on the same route and topic (src/ancillary). */
export const ancillaryEventDocSchema = ancillaryEventSchema(() => new Date()).meta({
  id: 'AncillaryUsageEvent',
  description:
    '`snapshot.created` `{snapshotId, sizeBytes}`, `snapshot.deleted` `{snapshotId}`, `volume.created` / `volume.resized` `{volumeId, sizeGiB}`, ' +
    '`volume.deleted` `{volumeId}`, `egress.reported` `{bytes, from, to}` (with `runtimeId`). Same id dedup as lifecycle events.',
});

const anyEvent = z.union([lifecycleEventDocSchema, ancillaryEventDocSchema]);
const list = z.array(anyEvent).min(1).max(MAX_EVENTS);

export const eventsBodySchema = z
  .union([anyEvent, list, z.strictObject({ events: list })])
  .meta({ id: 'EventsRequest', description: 'One event, an array of events, or `{events: [...]}`' });

export const ingestResultSchema = z
  .strictObject({
    accepted: z.number().int().meta({ description: 'Events applied now' }),
    duplicates: z.number().int().meta({ description: 'Events already applied before (same id): nothing done' }),
  })
  .meta({ id: 'EventsResult' });
