import { randomUUID } from 'node:crypto';
import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService, type AuditEntry } from 'src/audit/audit.service';
import { advisoryKey } from 'src/common/database/advisory-lock';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { Clock } from 'src/infra/clock/clock';
import { SeatHistoryHooks, type SeatHistoryChange } from './seat-history-hooks';

export type MemberChangeType = 'member.added' | 'member.removed';

/** A membership change, as `accounts.membership.v1` carries it (and as the HTTP endpoints make one). */
export interface MemberChange {
  id: string;
  type: MemberChangeType;
  occurredAt: Date;
  accountId: string;
  userId: string;
}

export interface MemberView {
  accountId: string;
  userId: string;
  active: boolean;
  changedAt: string;
  seats: number;
}

/** Called after a transaction that changed members commits, with the accounts whose seats may have changed. */
export type SeatsChangedListener = (accountIds: string[]) => void;

/**
 * Account members (seats = active members). A change is applied when it is newer than the one that
 * set the member's current state (by occurredAt, then id), so any delivery order ends the same;
 * every change is kept in `account_member_events`, which says who held a seat when.
 */
@Injectable()
export class MembersService {
  private readonly logger = new Logger('Members');
  private readonly listeners: SeatsChangedListener[] = [];

  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly hooks: SeatHistoryHooks,
  ) {}

  onSeatsChanged(listener: SeatsChangedListener): void {
    this.listeners.push(listener);
  }

  /** Tells listeners (Stripe seat sync) after commit; never throws. */
  seatsChanged(accountIds: string[]): void {
    if (accountIds.length === 0) return;
    for (const l of this.listeners) {
      try {
        l([...new Set(accountIds)]);
      } catch (error) {
        this.logger.error(`seat listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  /** PUT / DELETE /v1/accounts/{id}/members/{userId}: a change happening now. */
  async set(accountId: string, userId: string, active: boolean, actor: string, correlationId: string | null): Promise<MemberView> {
    const change: MemberChange = {
      id: `http_${randomUUID()}`,
      type: active ? 'member.added' : 'member.removed',
      occurredAt: this.clock.now(),
      accountId,
      userId,
    };
    const view = await inTransaction(this.ds, async (em) => {
      // FOR SHARE: an account becoming a user account (which it may not with members) waits, then sees this member.
      const [account] = await rows<{ kind: string }>(em, `SELECT kind FROM accounts WHERE id = $1 FOR SHARE`, [accountId]);
      if (!account) throw BillingException.notFound(`Account ${accountId}`);
      if (account.kind !== 'organization') {
        throw BillingException.invalid([{ field: 'id', message: 'is a user account: only organization accounts have members' }]);
      }
      await this.apply(em, [change], 'http', actor, correlationId);
      return this.member(em, accountId, userId);
    });
    this.seatsChanged([accountId]);
    return view!;
  }

  /**
   * Applies changes in the caller's transaction (audited; the audit rows are written last). Changes
   * of unknown accounts, and of user accounts (which have no members), are skipped. Returns the accounts whose members changed.
   */
  /**
   * `correlationId`: the request's id; changes from Kafka are audited under their own event id.
   */
  async apply(
    em: EntityManager,
    changes: MemberChange[],
    source: 'http' | 'kafka',
    actor: string,
    correlationId: string | null = null,
  ): Promise<string[]> {
    if (changes.length === 0) return [];
    const kinds = new Map(
      // FOR SHARE, in id order: the kind cannot change to `user` under changes applied as an organization's.
      (
        await rows<{ id: string; kind: string }>(em, `SELECT id, kind FROM accounts WHERE id = ANY($1) ORDER BY id FOR SHARE`, [
          [...new Set(changes.map((c) => c.accountId))],
        ])
      ).map((r) => [r.id, r.kind]),
    );
    const audits: AuditEntry[] = [];
    const changed = new Set<string>();
    // Every change new to the history, applied or stale for the member's state: by account.
    const received = new Map<string, SeatHistoryChange['changes']>();
    // Sorted, so concurrent batches lock member rows in the same order.
    const sorted = [...changes].sort(
      (a, b) =>
        (a.accountId + '\u0000' + a.userId).localeCompare(b.accountId + '\u0000' + b.userId) ||
        a.occurredAt.getTime() - b.occurredAt.getTime(),
    );
    // Each member's lock, even before their row exists (two first changes at once must not both read
    // "not a member": each would audit a seat added), all of them before any member is written: a
    // write that changes the seats holds the account's count (account_seats) to the commit, so no
    // lock may be waited for after it. In the sorted order, each member once.
    const members = sorted.filter((c) => kinds.get(c.accountId) === 'organization').map((c) => `member:${c.accountId}:${c.userId}`);
    for (const key of new Set(members)) await em.query(`SELECT pg_advisory_xact_lock($1)`, [advisoryKey(key)]);
    for (const c of sorted) {
      const kind = kinds.get(c.accountId);
      if (kind === undefined) {
        this.logger.warn(`membership change ${c.id} names unknown account ${c.accountId}: skipped`);
        continue;
      }
      if (kind !== 'organization') {
        // A user account has no members (no seats): the change is ignored, not applied.
        this.logger.warn(`membership change ${c.id} names user account ${c.accountId}, which has no members: ignored`);
        continue;
      }
      const [fresh] = await rows(
        em,
        `INSERT INTO account_member_events (id, account_id, user_id, type, occurred_at, source) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO NOTHING RETURNING id`,
        [c.id, c.accountId, c.userId, c.type, c.occurredAt, source],
      );
      if (!fresh) continue;
      const ofAccount = received.get(c.accountId) ?? [];
      if (ofAccount.length === 0) received.set(c.accountId, ofAccount);
      ofAccount.push({ id: c.id, userId: c.userId, type: c.type, occurredAt: c.occurredAt });
      const active = c.type === 'member.added';
      const [before] = await rows<{ active: boolean }>(
        em,
        `SELECT active FROM account_members WHERE account_id = $1 AND user_id = $2 FOR UPDATE`,
        [c.accountId, c.userId],
      );
      const [applied] = await rows<{ active: boolean }>(
        em,
        `INSERT INTO account_members (account_id, user_id, active, changed_at, change_id) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (account_id, user_id) DO UPDATE SET active = EXCLUDED.active, changed_at = EXCLUDED.changed_at,
           change_id = EXCLUDED.change_id, updated_at = now()
         WHERE (account_members.changed_at, account_members.change_id) < (EXCLUDED.changed_at, EXCLUDED.change_id)
         RETURNING active`,
        [c.accountId, c.userId, active, c.occurredAt, c.id],
      );
      // A member never seen before is inactive: removing one changes nothing and is not audited (its row
      // is kept, so that an older `member.added` delivered later does not add them).
      if (!applied || (before?.active ?? false) === applied.active) continue;
      changed.add(c.accountId);
      audits.push({
        actor,
        action: active ? 'seat.added' : 'seat.removed',
        accountId: c.accountId,
        before: { userId: c.userId, active: before?.active ?? false },
        after: { userId: c.userId, active, changeId: c.id, occurredAt: c.occurredAt.toISOString(), source },
        correlationId: source === 'kafka' ? c.id : correlationId,
      });
    }
    // Before the audit rows (written last, as every write of this transaction): what was received
    // changes who held a seat from its earliest date on (the Stripe module rechecks invoices created since).
    await this.hooks.historyChanged(
      em,
      [...received].map(([accountId, list]): SeatHistoryChange => {
        const changes = [...list].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || a.id.localeCompare(b.id));
        return {
          accountId,
          since: changes[0]!.occurredAt,
          changes,
          seatsAt: (at) => this.seatsAt(em, accountId, at),
          historyOf: (userIds) => this.historyOf(em, accountId, userIds),
        };
      }),
    );
    if (audits.length > 0) await this.audit.recordMany(em, audits);
    return [...changed];
  }

  async member(em: Pick<EntityManager, 'query'>, accountId: string, userId: string): Promise<MemberView | null> {
    const [row] = await rows<{ active: boolean; changed_at: Date }>(
      em,
      `SELECT active, changed_at FROM account_members WHERE account_id = $1 AND user_id = $2`,
      [accountId, userId],
    );
    if (!row) return null;
    return { accountId, userId, active: row.active, changedAt: row.changed_at.toISOString(), seats: await this.activeSeats(em, accountId) };
  }

  async list(
    accountId: string,
  ): Promise<{ accountId: string; seats: number; members: { userId: string; active: boolean; changedAt: string }[] }> {
    const found = await rows<{ user_id: string | null; active: boolean | null; changed_at: Date | null }>(
      this.ds,
      // The account itself, with its members: an account that does not exist is a 404, as on every account route.
      `SELECT m.user_id, m.active, m.changed_at FROM accounts a LEFT JOIN account_members m ON m.account_id = a.id
       WHERE a.id = $1 ORDER BY m.user_id`,
      [accountId],
    );
    if (found.length === 0) throw BillingException.notFound(`Account ${accountId}`);
    const members = found.filter((m): m is { user_id: string; active: boolean; changed_at: Date } => m.user_id !== null);
    return {
      accountId,
      seats: members.filter((m) => m.active).length,
      members: members.map((m) => ({ userId: m.user_id, active: m.active, changedAt: m.changed_at.toISOString() })),
    };
  }

  /**
   * A page of an account's members by user id, removed ones included: `size` members after the user
   * `after` (the last of the previous page), read from the primary key, and whether more follow
   * (`next`: the last user shown); with the account's seats.
   */
  async page(
    accountId: string,
    page: { after?: string; size: number },
  ): Promise<{ seats: number; members: { userId: string; active: boolean; changedAt: string }[]; next: string | null }> {
    const found = await rows<{ user_id: string; active: boolean; changed_at: Date }>(
      this.ds,
      `SELECT user_id, active, changed_at FROM account_members
       WHERE account_id = $1 AND ($2::text IS NULL OR user_id > $2) ORDER BY user_id LIMIT $3`,
      [accountId, page.after ?? null, page.size + 1],
    );
    const seats = await this.activeSeats(undefined, accountId);
    const members = found.slice(0, page.size).map((m) => ({ userId: m.user_id, active: m.active, changedAt: m.changed_at.toISOString() }));
    return { seats, members, next: found.length > page.size ? (members[members.length - 1]?.userId ?? null) : null };
  }

  /**
   * The account's active members: their count kept with them (account_seats, written by the
   * statement that changes a member), one row, exact as `em`'s transaction sees the members.
   */
  async activeSeats(em: Pick<EntityManager, 'query'> | undefined, accountId: string): Promise<number> {
    const [row] = await rows<{ seats: number }>(em ?? this.ds, `SELECT seats FROM account_seats WHERE account_id = $1`, [accountId]);
    return row?.seats ?? 0;
  }

  /** Active members at an instant, from the change history (latest change per user at or before `at`). */
  async seatsAt(em: Pick<EntityManager, 'query'> | undefined, accountId: string, at: Date): Promise<number> {
    const [row] = await rows<{ n: number }>(
      em ?? this.ds,
      `SELECT count(*)::int AS n FROM (
         SELECT DISTINCT ON (user_id) type FROM account_member_events
         WHERE account_id = $1 AND occurred_at <= $2 ORDER BY user_id, occurred_at DESC, id DESC
       ) latest WHERE type = 'member.added'`,
      [accountId, at],
    );
    return row?.n ?? 0;
  }

  /** Every change received for these members of the account, in the history's order. */
  async historyOf(
    em: Pick<EntityManager, 'query'>,
    accountId: string,
    userIds: string[],
  ): Promise<{ id: string; userId: string; type: MemberChangeType; occurredAt: Date }[]> {
    return rows(
      em,
      `SELECT id, user_id AS "userId", type, occurred_at AS "occurredAt" FROM account_member_events
       WHERE account_id = $1 AND user_id = ANY($2) ORDER BY occurred_at, id`,
      [accountId, userIds],
    );
  }
}
