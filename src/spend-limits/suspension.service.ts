import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { notifyOnce } from 'src/messaging/notifications';
import { topicsOf } from 'src/messaging/topics';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { setSuspensionCause } from 'src/accounts/account-writes';
import type { AccountStatus, SuspensionCause } from 'src/accounts/entities/account.entity';
import { AuditService } from 'src/audit/audit.service';
import { inTransaction } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { Clock } from 'src/infra/clock/clock';
import { SpendLimitsService } from './spend-limits.service';

export interface SuspensionResult {
  accountId: string;
  status: AccountStatus;
  /** What holds the account suspended (empty: active). */
  suspendedFor: SuspensionCause[];
  terminated: string[];
}

/**
 * Account suspension, by an admin or for non-payment (Stripe): a suspended account gets no new
 * launches (DL_BILLING_ACCOUNT_SUSPENDED) and its runtimes are told to terminate. Each cause is placed
 * and lifted on its own; the account is active again only when none is left.
 */
@Injectable()
export class SuspensionService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly spendLimits: SpendLimitsService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
  ) {}

  /**
   * Places or lifts `cause` (an admin's, by default) in a transaction of its own, for an admin. An admin
   * only lifts a suspension for non-payment (a waiver: the past-due spell it came from does not suspend
   * the account again; Stripe's payment is not touched); only Stripe places one.
   */
  set(
    accountId: string,
    suspended: boolean,
    reason: string | null,
    actor: string,
    cause: SuspensionCause = 'admin',
  ): Promise<SuspensionResult> {
    if (cause === 'non_payment' && suspended) {
      throw BillingException.invalid([
        { field: 'cause', message: 'a suspension for non-payment is placed by Stripe only: it can only be lifted' },
      ]);
    }
    const waivedAt = cause === 'non_payment' ? this.clock.now() : null;
    return inTransaction(this.ds, (em) => this.setWithin(em, accountId, suspended, reason, actor, cause, waivedAt));
  }

  /** The same in the caller's transaction (Stripe's, which decides on the subscription row it holds locked). */
  async setWithin(
    em: EntityManager,
    accountId: string,
    suspended: boolean,
    reason: string | null,
    actor: string,
    cause: SuspensionCause,
    waivedAt: Date | null = null,
  ): Promise<SuspensionResult> {
    const now = this.clock.now();
    const change = await setSuspensionCause(em, accountId, cause, suspended, waivedAt);
    if (!change) throw BillingException.notFound(`Account ${accountId}`);
    const { before, after } = change;
    const terminated = suspended ? await this.spendLimits.terminateActive(em, accountId, null, 'account_suspended', now) : [];
    const result = { accountId, status: after.status, suspendedFor: after.suspendedFor, terminated };
    // Asked again with nothing to change (a double-submitted form): no audit row for no change.
    if (before.suspendedFor.join() === after.suspendedFor.join() && terminated.length === 0) return result;
    if (before.status !== after.status) {
      // The holder hears of it, once per change (a retry of the same change finds nothing to change).
      const type = suspended ? 'account.suspended' : 'account.reactivated';
      await notifyOnce(
        em,
        topicsOf(this.config).notifications,
        [{ type, accountId, cause: `${type}:${accountId}:${now.toISOString()}`, data: { reason, terminated: terminated.length } }],
        now,
      );
    }
    await this.audit.record(em, {
      actor,
      action: suspended ? 'account.suspended' : 'account.reactivated',
      accountId,
      before: { status: before.status, suspendedFor: before.suspendedFor },
      after: { status: after.status, suspendedFor: after.suspendedFor, cause, reason, terminated },
      at: now,
    });
    return result;
  }
}
