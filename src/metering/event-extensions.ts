import { Inject, Injectable, Optional } from '@nestjs/common';
import type { Finding } from 'src/common/errors/billing.exception';

/**
 * Event types other modules handle on the lifecycle paths (`POST /v1/events` and the lifecycle
 * topic) — the ancillary module's snapshots, volumes and egress — so that metering routes them
 * without knowing them. Lifecycle events never reach a handler.
 */
export interface ExtraEventHandler {
  readonly types: ReadonlySet<string>;
  validate(value: unknown, prefix?: string): { ok: true; event: unknown } | { ok: false; reason: string; findings: Finding[] };
  /** Applies valid events (one transaction); with `allOrNothing`, a refusal stores nothing and throws ExtraEventsRefused. */
  ingest(
    events: unknown[],
    opts: { allOrNothing?: boolean },
  ): Promise<{ accepted: number; duplicates: number; refused: { event: unknown; findings: Finding[] }[] }>;
}

/** Thrown by an all-or-nothing ingest that refused some of its events (by what the database knows): none was stored. */
export class ExtraEventsRefused extends Error {
  constructor(readonly refused: { event: unknown; findings: Finding[] }[]) {
    super(`${refused.length} event(s) refused`);
  }
}

/** The handlers of extra event types: provided by the module that composes the app (src/extensions.module.ts). */
export const EXTRA_EVENT_HANDLERS = Symbol('ExtraEventHandler[]');

/** Routes an event of an extra type to its handler (EXTRA_EVENT_HANDLERS; none in a context without them). */
@Injectable()
export class EventExtensions {
  constructor(@Optional() @Inject(EXTRA_EVENT_HANDLERS) private readonly handlers: readonly ExtraEventHandler[] = []) {}

  /** Every extra type handled (for the finding on an unknown type). */
  types(): string[] {
    return this.handlers.flatMap((h) => [...h.types]);
  }

  /** The handler of an event (already parsed JSON) of a handled type, or undefined. */
  handlerOf(value: unknown): ExtraEventHandler | undefined {
    const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
    return typeof type === 'string' ? this.handlers.find((h) => h.types.has(type)) : undefined;
  }
}
