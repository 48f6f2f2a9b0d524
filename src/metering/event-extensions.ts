import { Injectable } from '@nestjs/common';
import type { Finding } from '../common/errors/billing.exception';

/**
 * Event types other modules handle on the lifecycle paths (`POST /v1/events` and the lifecycle
 * topic), registered at startup — the ancillary module's snapshots, volumes and egress — so that
 * metering routes them without knowing them. Lifecycle events never reach a handler.
 */
export interface ExtraEventHandler {
  readonly types: ReadonlySet<string>;
  validate(value: unknown, prefix?: string): { ok: true; event: unknown } | { ok: false; reason: string; findings: Finding[] };
  /** Applies valid events (one transaction); with `allOrNothing`, a refusal stores nothing and throws ExtraEventsRefused. */
  ingest(events: unknown[], opts: { allOrNothing?: boolean }): Promise<{ accepted: number; duplicates: number; refused: { event: unknown; findings: Finding[] }[] }>;
}

/** Thrown by an all-or-nothing ingest that refused some of its events (by what the database knows): none was stored. */
export class ExtraEventsRefused extends Error {
  constructor(readonly refused: { event: unknown; findings: Finding[] }[]) {
    super(`${refused.length} event(s) refused`);
  }
}

@Injectable()
export class EventExtensions {
  private handler: ExtraEventHandler | undefined;

  register(handler: ExtraEventHandler): void {
    this.handler = handler;
  }

  /** The handler of an event (already parsed JSON) of a registered type, or undefined. */
  handlerOf(value: unknown): ExtraEventHandler | undefined {
    const type = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
    return typeof type === 'string' && this.handler?.types.has(type) ? this.handler : undefined;
  }
}
