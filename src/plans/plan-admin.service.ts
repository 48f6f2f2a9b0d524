import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import type { PlanSetHook } from 'src/accounts/account-hooks';
import { setPlanTerms } from 'src/accounts/account-writes';
import { AuditService } from 'src/audit/audit.service';
import { canonicalJson } from 'src/common/canonical-json';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { findingsOf } from 'src/common/http/zod-validation.pipe';
import { formatCredits } from 'src/common/money';
import { Clock } from 'src/infra/clock/clock';
import { LedgerService } from 'src/ledger/ledger.service';
import { AllowancesService } from './allowances.service';
import type { SetPlanDto } from './dto/plan.dto';
import { upgradeKey } from './allowance-keys';
import { grantsAllowanceHere, loadPlanAccount, termsOf, type PlanAccount } from './plan-accounts';
import { PlanCatalog, planOverridesSchema, type Plan, type PlanOverrides } from 'src/plan-catalog/plan-catalog';

export interface PlanView {
  accountId: string;
  plan: string;
  overrides: PlanOverrides | null;
  billingCycleAnchor: string | null;
  effective: Record<string, unknown>;
  period: { from: string; to: string };
}

export function planJson(plan: Plan): Record<string, unknown> {
  return {
    id: plan.id,
    name: plan.name,
    includedCredits: formatCredits(plan.includedCreditsMicros),
    period: plan.period,
    runsPerPeriod: plan.runsPerPeriod,
    agentsPerPeriod: plan.agentsPerPeriod,
    concurrentRuntimes: plan.concurrentRuntimes,
    sizeClasses: [...plan.sizeClasses],
    gpus: plan.gpus,
    topUps: plan.topUps,
  };
}

/** Sets an account's plan, overrides and cycle anchor (admin), audited as `plan.changed`. */
@Injectable()
export class PlanAdminService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly catalog: PlanCatalog,
    private readonly ledger: LedgerService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly allowances: AllowancesService,
  ) {}

  /** What an account's new plan takes here (PLAN_SET_HOOKS): its current allowance. */
  readonly planSetHook: PlanSetHook = (em, accountId) => this.grantCurrentAllowance(em, accountId);

  /**
   * A new account, or one whose plan changed, gets its current period's allowance at once (when
   * this service grants it: Free and Enterprise with included credits), so its wallet shows it
   * before the first launch. Idempotent with the monthly reset and the lazy grant (same key). An
   * upgrade within a period whose allowance was already granted gets the difference, expiring with
   * the period, announced as `credits.granted`; a downgrade takes nothing back.
   */
  async grantCurrentAllowance(em: EntityManager, accountId: string): Promise<void> {
    const account = await loadPlanAccount(em, accountId);
    if (!account) return;
    const now = this.clock.now();
    const { plan, period } = termsOf(this.catalog, account, now);
    if (!grantsAllowanceHere(plan)) return;
    await this.allowances.ensure(em, account, plan, period, now);
    const [given] = await rows<{ total: string }>(
      em,
      // This service's allowances of the period: a Team cycle's (its invoice as reference) ending with it is not one.
      `SELECT coalesce(sum(amount), 0)::text AS total FROM grants
       WHERE account_id = $1 AND source = 'plan_allowance' AND expires_at = $2 AND reference IS NULL`,
      [accountId, period.end],
    );
    const missing = plan.includedCreditsMicros - BigInt(given?.total ?? '0');
    if (missing <= 0n) return;
    const upgrade = await this.ledger.grant(em, {
      accountId,
      source: 'plan_allowance',
      amount: missing,
      expiresAt: period.end,
      idempotencyKey: upgradeKey(period, plan.includedCreditsMicros),
      reason: `${plan.name} plan upgrade: the rest of the allowance for ${period.start.toISOString()} to ${period.end.toISOString()}`,
      actor: 'system:allowance',
    });
    await this.allowances.announceUpgrade(em, accountId, upgrade.grant, period, now);
  }

  async view(accountId: string): Promise<PlanView> {
    const account = await loadPlanAccount(this.ds, accountId);
    if (!account) throw BillingException.notFound(`Account ${accountId}`);
    return this.viewOf(account);
  }

  /** The overrides of a plan change, checked (400 with a finding per field otherwise); null: none. */
  checkOverrides(input: SetPlanDto): PlanOverrides | null {
    if (!input.overrides) return null;
    const parsed = planOverridesSchema.safeParse(input.overrides);
    if (!parsed.success) throw BillingException.invalid(findingsOf(parsed.error, 'overrides'), 'The plan overrides are invalid');
    return input.overrides as PlanOverrides;
  }

  setPlan(accountId: string, input: SetPlanDto, actor: string, correlationId: string | null): Promise<PlanView> {
    const overrides = this.checkOverrides(input);
    return inTransaction(this.ds, async (em) => {
      // Wallet first (the lock reservations take before reading the plan), audit last.
      await this.ledger.lockWallet(em, accountId);
      const before = await loadPlanAccount(em, accountId);
      if (!before) throw BillingException.notFound(`Account ${accountId}`);
      const anchor =
        input.billingCycleAnchor === undefined
          ? before.billingCycleAnchor
          : input.billingCycleAnchor === null
            ? null
            : new Date(input.billingCycleAnchor);
      await setPlanTerms(em, accountId, { plan: input.plan, overrides, billingCycleAnchor: anchor });
      const after: PlanAccount = { ...before, plan: input.plan, overrides, billingCycleAnchor: anchor };
      const changed =
        before.plan !== after.plan ||
        // Canonical JSON: the stored jsonb does not keep the request's key order.
        canonicalJson(before.overrides) !== canonicalJson(after.overrides) ||
        before.billingCycleAnchor?.getTime() !== after.billingCycleAnchor?.getTime();
      if (changed) {
        await this.audit.record(em, {
          actor,
          action: 'plan.changed',
          accountId,
          before: termsJson(before),
          after: termsJson(after),
          correlationId,
          at: this.clock.now(),
        });
        await this.grantCurrentAllowance(em, accountId);
      }
      return this.viewOf(after);
    });
  }

  private viewOf(account: PlanAccount): PlanView {
    const { plan, period } = termsOf(this.catalog, account, this.clock.now());
    return {
      accountId: account.id,
      plan: account.plan,
      overrides: account.overrides,
      billingCycleAnchor: account.billingCycleAnchor?.toISOString() ?? null,
      effective: planJson(plan),
      period: { from: period.start.toISOString(), to: period.end.toISOString() },
    };
  }
}

function termsJson(a: PlanAccount): Record<string, unknown> {
  return { plan: a.plan, overrides: a.overrides, billingCycleAnchor: a.billingCycleAnchor?.toISOString() ?? null };
}
