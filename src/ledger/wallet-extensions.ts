import { Inject, Injectable, Optional } from '@nestjs/common';

/** `spend` of the wallet view: what the period's spend limit counts. */
export interface SpendView {
  period: string;
  from: string;
  to: string;
  spent: string;
  held: string;
  limit: string | null;
}

/** `runs` of the wallet view: runtime launches in the plan's period. */
export interface RunsView {
  used: number;
  included: number | null;
  resetsAt: string | null;
}

export interface WalletExtension {
  spend?(accountId: string, now: Date, base: SpendView): Promise<SpendView>;
  runs?(accountId: string, now: Date): Promise<RunsView | null>;
}

/** The wallet view's extensions, in order: provided by the module that composes the app (src/extensions.module.ts). */
export const WALLET_EXTENSIONS = Symbol('WalletExtension[]');

/**
 * The wallet view as later modules fill it in: the spend-limits module gives `spend` (its limit and
 * period), the plans module `runs` (quota used, included, reset), through WALLET_EXTENSIONS. Without
 * them (a context without those modules), the ledger reports this calendar month's settled charges
 * and open holds with no limit, and `runs: null`.
 */
@Injectable()
export class WalletExtensions {
  constructor(@Optional() @Inject(WALLET_EXTENSIONS) private readonly extensions: readonly WalletExtension[] = []) {}

  async spend(accountId: string, now: Date, base: SpendView): Promise<SpendView> {
    let view = base;
    for (const e of this.extensions) if (e.spend) view = await e.spend(accountId, now, view);
    return view;
  }

  async runs(accountId: string, now: Date): Promise<RunsView | null> {
    for (const e of this.extensions) if (e.runs) return e.runs(accountId, now);
    return null;
  }
}
