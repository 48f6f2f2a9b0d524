import type { GrantSource } from './core/types';
import type { HoldStatus } from './entities/hold.entity';

/** A wallet's balances in micro-credits. total = available + held − debt. */
export interface Balance {
  total: bigint;
  held: bigint;
  available: bigint;
  /** What the wallet owes (charges it could not pay); 0 normally. */
  debt: bigint;
}

export interface GrantView {
  id: string;
  source: GrantSource;
  amount: bigint;
  remaining: bigint;
  priority: number;
  expiresAt: Date | null;
  createdAt: Date;
}

export interface WalletView extends Balance {
  accountId: string;
  /** Unexpired grants with credits left, in burn order. */
  grants: GrantView[];
}

export interface HoldView {
  id: string;
  accountId: string;
  status: HoldStatus;
  amount: bigint;
  settledAmount: bigint;
  releasedAmount: bigint;
  chargedAmount: bigint;
  debtAmount: bigint;
  reference: string | null;
  expiresAt: Date | null;
  createdAt: Date;
  resolvedAt: Date | null;
}

export interface GrantInput {
  accountId: string;
  source: GrantSource;
  /** Micro-credits, > 0. */
  amount: bigint;
  expiresAt: Date | null;
  /** Lower burns first among grants of the same expiry; defaults by source. */
  priority?: number;
  /** Optional caller-chosen grant id (e.g. derived from a Stripe session); generated otherwise. */
  grantId?: string;
  idempotencyKey: string;
  reason: string;
  /** Who, for the audit log: `key:<id>`, `system:<job>`, `stripe`, … */
  actor: string;
  reference?: string | null;
  correlationId?: string | null;
}

export interface GrantResult {
  grant: GrantView;
  balance: Balance;
  transactionId: string;
  /** True when the idempotency key had already been used for this same request. */
  replayed: boolean;
}

export interface CreateHoldInput extends AuditOptions {
  accountId: string;
  holdId: string;
  amount: bigint;
  expiresAt?: Date | null;
  reference: string | null;
  idempotencyKey: string;
}

export interface IncreaseHoldInput extends AuditOptions {
  holdId: string;
  amount: bigint;
  idempotencyKey: string;
}

export interface HoldResult {
  hold: HoldView;
  balance: Balance;
  /** The balance the hold was decided on, before it (replayed: the balance now, as `balance`). */
  before: Balance;
  /** The reservation transaction (the first one, when replayed). */
  transactionId: string;
  replayed: boolean;
}

/** Who and why, for the audit row of a ledger write. */
export interface AuditOptions {
  actor?: string;
  correlationId?: string | null;
  /** Why (kept in the audit row, and in the transaction's explanation where it has one). */
  reason?: string;
}

export type ResolveOptions = AuditOptions;

export interface SettleHoldInput extends ResolveOptions {
  holdId: string;
  /** Requested charge; capped at the hold. */
  amount: bigint;
}

export interface ResolveResult {
  holdId: string;
  accountId: string;
  status: HoldStatus;
  charged: bigint;
  released: bigint;
  /** False when the hold had already been resolved: this is the first outcome again. */
  firstTime: boolean;
  transactionId: string | null;
  balance: Balance | null;
}

export interface AdjustHoldInput extends ResolveOptions {
  holdId: string;
  /** The corrected total charge; capped at the hold's amount. */
  newCharge: bigint;
  idempotencyKey: string;
}

export interface AdjustResult {
  holdId: string;
  accountId: string;
  previousCharge: bigint;
  charged: bigint;
  /** charged − previousCharge. */
  delta: bigint;
  /** Part of the hold's charge now recorded as debt. */
  debt: bigint;
  transactionId: string | null;
  replayed: boolean;
  balance: Balance | null;
}

export interface ExpireGrantsResult {
  grants: number;
  wallets: number;
  amount: bigint;
}

export interface StatementEntry {
  id: string;
  at: Date;
  kind: string;
  amount: bigint;
  totalAfter: bigint;
  heldAfter: bigint;
  availableAfter: bigint;
  holdId: string | null;
  grantId: string | null;
  reference: string | null;
  explanation: Record<string, unknown>;
}

export interface Discrepancy {
  accountId: string | null;
  what: string;
  stored: string;
  fromEntries: string;
}
