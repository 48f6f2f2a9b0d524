import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from 'src/common/config/config';
import { notifyOnce } from 'src/messaging/notifications';
import { topicsOf } from 'src/messaging/topics';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { setAccountStatus } from 'src/accounts/account-writes';
import { AuditService } from 'src/audit/audit.service';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { Clock } from 'src/infra/clock/clock';
import { SpendLimitsService } from './spend-limits.service';

/**
 * Account suspension (set by an admin now, by Stripe's payment failures later): a suspended account
 * gets no new launches (DL_BILLING_ACCOUNT_SUSPENDED) and its runtimes are told to terminate.
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

  async set(
    accountId: string,
    suspended: boolean,
    reason: string | null,
    actor: string,
  ): Promise<{ accountId: string; status: string; terminated: string[] }> {
    return inTransaction(this.ds, async (em) => {
      const now = this.clock.now();
      const [before] = await rows<{ status: string }>(em, `SELECT status FROM accounts WHERE id = $1 FOR UPDATE`, [accountId]);
      if (!before) throw BillingException.notFound(`Account ${accountId}`);
      const status = suspended ? 'suspended' : 'active';
      await setAccountStatus(em, accountId, status);
      const terminated = suspended ? await this.spendLimits.terminateActive(em, accountId, null, 'account_suspended', now) : [];
      // Asked again with nothing to change (a double-submitted form): no audit row for no change.
      if (before.status === status && terminated.length === 0) return { accountId, status, terminated };
      if (before.status !== status) {
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
        before: { status: before.status },
        after: { status, reason, terminated },
        at: now,
      });
      return { accountId, status, terminated };
    });
  }
}
