import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager } from 'typeorm';
import { AuditService } from 'src/audit/audit.service';
import { inTransaction, rows } from 'src/common/database/transaction';
import { BillingException } from 'src/common/errors/billing.exception';
import { AccountHooks } from './account-hooks';
import type { UpsertAccountDto } from './dto/account.dto';
import type { PlanId } from 'src/plan-catalog/plan-catalog';
import type { AccountKind, AccountStatus, SuspensionCause } from './entities/account.entity';

export interface AccountView {
  id: string;
  kind: AccountKind;
  plan: PlanId;
  name: string | null;
  status: AccountStatus;
  suspendedFor: SuspensionCause[];
  createdAt: string;
  updatedAt: string;
}

interface AccountRow {
  id: string;
  kind: AccountKind;
  plan: PlanId;
  name: string | null;
  status: AccountStatus;
  suspended_for: SuspensionCause[];
  plan_overrides: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * Accounts as the control plane declares them; every account has a wallet from its creation on
 * (and, on a plan that includes monthly credits, this month's credits: see AccountHooks).
 */
@Injectable()
export class AccountsService {
  constructor(
    @InjectDataSource() private readonly ds: DataSource,
    private readonly audit: AuditService,
    private readonly hooks: AccountHooks,
  ) {}

  async get(accountId: string): Promise<AccountView | null> {
    const [row] = await rows<AccountRow>(this.ds, `SELECT * FROM accounts WHERE id = $1`, [accountId]);
    return row ? view(row) : null;
  }

  upsertTx(input: UpsertAccountDto, actor: string, correlationId: string | null): Promise<{ created: boolean; account: AccountView }> {
    return inTransaction(this.ds, (em) => this.upsert(em, input, actor, correlationId));
  }

  /** Creates the account (and its wallet) or updates kind, plan and name; audited when something changed. */
  async upsert(
    em: EntityManager,
    input: UpsertAccountDto,
    actor: string,
    correlationId: string | null,
  ): Promise<{ created: boolean; account: AccountView }> {
    const locked = `SELECT * FROM accounts WHERE id = $1 FOR NO KEY UPDATE`;
    let [before] = await rows<AccountRow>(em, locked, [input.id]);
    let row: AccountRow | undefined;
    if (!before) {
      // Created here, or by a request that got there first (the insert waits for it): then it is an update.
      [row] = await rows<AccountRow>(
        em,
        `INSERT INTO accounts (id, kind, plan, name) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING RETURNING *`,
        [input.id, input.kind, input.plan, input.name ?? null],
      );
      if (!row) [before] = await rows<AccountRow>(em, locked, [input.id]);
    }
    if (before) {
      if (before.kind === 'organization' && input.kind === 'user') await this.refuseIfMembers(em, input.id);
      const name = input.name === undefined ? before.name : input.name;
      // Overrides are the terms of one plan (an Enterprise contract's): another plan does not inherit them.
      [row] = await rows<AccountRow>(
        em,
        `UPDATE accounts SET kind = $2, plan = $3, name = $4,
           plan_overrides = CASE WHEN plan IS DISTINCT FROM $3 THEN NULL ELSE plan_overrides END,
           updated_at = CASE WHEN (kind, plan, name) IS DISTINCT FROM ($2, $3, $4) THEN now() ELSE updated_at END
         WHERE id = $1 RETURNING *`,
        [input.id, input.kind, input.plan, name],
      );
    }
    const account = view(row!);
    const changed = !before || before.kind !== account.kind || before.plan !== account.plan || before.name !== account.name;
    if (changed) {
      const dropped = before?.plan_overrides && !row!.plan_overrides ? before.plan_overrides : null;
      await this.audit.record(em, {
        actor,
        action: before ? 'account.updated' : 'account.created',
        accountId: input.id,
        before: before ? { kind: before.kind, plan: before.plan, name: before.name, ...(dropped ? { overrides: dropped } : {}) } : null,
        after: { kind: account.kind, plan: account.plan, name: account.name, ...(dropped ? { overrides: null } : {}) },
        correlationId,
      });
    }
    if (!before || before.plan !== account.plan) await this.hooks.planWasSet(em, input.id);
    return { created: !before, account };
  }

  /** An organization with active members (seats, billed) cannot become a user account: members belong to organizations only. */
  private async refuseIfMembers(em: EntityManager, accountId: string): Promise<void> {
    const [members] = await rows<{ n: number }>(em, `SELECT count(*)::int AS n FROM account_members WHERE account_id = $1 AND active`, [
      accountId,
    ]);
    if ((members?.n ?? 0) === 0) return;
    throw BillingException.invalid([
      { field: 'kind', message: `the organization has ${members!.n} active member(s): remove them before it becomes a user account` },
    ]);
  }
}

function view(r: AccountRow): AccountView {
  return {
    id: r.id,
    kind: r.kind,
    plan: r.plan,
    name: r.name,
    status: r.status,
    suspendedFor: r.suspended_for,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  };
}
