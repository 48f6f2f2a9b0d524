import { z } from 'zod';
import { ConfigError } from 'src/common/config/config';
import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { findingsOf } from 'src/common/http/zod-validation.pipe';
import { parseCredits } from 'src/common/money';
import { ANCILLARY_PRICE_KEYS, type AncillaryPriceKey } from 'src/pricing/ancillary-prices';
import { sizeClassSchema, type Environment, type SizeClass } from 'src/pricing/environment';
import { readJsonFile } from 'src/pricing/rate-card';
import { PERIOD_KINDS, type PeriodKind } from './periods';

/** A plan id: a key of the plans file's `plans` (the catalog, not the code, says which exist). */
export type PlanId = string;

/** What a plan id may look like (the accounts table checks the same format; the catalog says which exist). */
export const PLAN_ID_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/** A plan id in the API document: any id of the plans file (a request's is checked against the catalog: PlanCatalog.withPlanIds). */
export const planIdField = z.string().meta({ description: 'A plan id of the plans file (as shipped: free, team, enterprise)' });

/** When a period's included credits are granted: at the period's start (here), or when its Stripe invoice is paid. */
export const ALLOWANCE_TRIGGERS = ['period_start', 'paid_invoice'] as const;
export type AllowanceTrigger = (typeof ALLOWANCE_TRIGGERS)[number];

/** Credits in the contract's JSON form ("50.000000"), as micro-credits. */
const creditsSchema = z
  .string({ error: 'must be credits as a decimal string with 6 decimals, e.g. "50.000000"' })
  .regex(/^\d{1,12}\.\d{6}$/, 'must be credits as a decimal string with 6 decimals, e.g. "50.000000"')
  .transform((text) => parseCredits(text) as bigint);

/** A quota: a count, or null for unlimited. */
const limitSchema = z.number().int('must be an integer or null (unlimited)').min(0, 'must not be negative').nullable();

const sizeClassesSchema = z.array(sizeClassSchema).refine((list) => new Set(list).size === list.length, 'must not repeat a size class');

const cents = z.number().int().positive();

/** A quantity in an item's unit (GiB-months, GiB, GiB-hours) with 6 decimals, as micro-units. */
const quantitySchema = z
  .string({ error: 'must be a quantity as a decimal string with 6 decimals, e.g. "10.000000"' })
  .regex(/^\d{1,12}\.\d{6}$/, 'must be a quantity as a decimal string with 6 decimals, e.g. "10.000000"')
  .transform((text) => parseCredits(text) as bigint);

/** Per item, the quantity a plan includes each calendar month ("included up to X"); absent: none. */
const ancillaryIncludedSchema = z.strictObject(
  Object.fromEntries(ANCILLARY_PRICE_KEYS.map((k) => [k, quantitySchema.optional()])) as Record<
    AncillaryPriceKey,
    z.ZodOptional<typeof quantitySchema>
  >,
);

/** What one credit is worth in dollars: the one place that says it (plan fees and top-ups are in cents). */
const creditValueSchema = z.strictObject({ currency: z.literal('usd'), centsPerCredit: cents });
const stripePriceId = z.string().min(1).max(255);

/** The fields an account's overrides may change (Enterprise is all overrides). */
const overridableShape = {
  includedCredits: creditsSchema,
  period: z.enum(PERIOD_KINDS),
  runsPerPeriod: limitSchema,
  agentsPerPeriod: limitSchema,
  concurrentRuntimes: limitSchema,
  sizeClasses: sizeClassesSchema,
  gpus: z.boolean(),
  topUps: z.boolean(),
  ancillaryIncluded: ancillaryIncludedSchema,
};

const stripePriceSchema = z.strictObject({ priceId: stripePriceId, unitAmountCents: cents });

/** Who bills a plan: nobody (Free, Enterprise's contract) or a Stripe subscription of two prices (Team). */
const billingSchema = z.discriminatedUnion('source', [
  z.strictObject({ source: z.literal('none') }),
  z.strictObject({
    source: z.literal('stripe_subscription'),
    currency: z.literal('usd'),
    /** The flat fee per billing cycle. */
    basePrice: stripePriceSchema,
    /** The per-seat price; its item quantity is the active seat count. */
    seatPrice: stripePriceSchema,
    /** The plan an account moves to when its subscription stops billing (canceled, expired). */
    fallbackPlan: z.string().regex(PLAN_ID_PATTERN, 'must be a plan id'),
  }),
]);

const planSchema = z.strictObject({
  name: z.string().min(1),
  billing: billingSchema,
  allowanceTrigger: z.enum(ALLOWANCE_TRIGGERS),
  /** Only an admin moves an account on or off this plan: Stripe subscription events leave it alone (Enterprise). */
  adminOnly: z.boolean().default(false),
  ...overridableShape,
  ancillaryIncluded: ancillaryIncludedSchema.default({}),
});

export const plansFileSchema = z
  .strictObject({
    credit: creditValueSchema,
    plans: z
      .record(
        z.string().regex(PLAN_ID_PATTERN, 'plan ids are 1-32 characters of lowercase letters, digits, _ and -, starting with a letter'),
        planSchema,
      )
      .refine((plans) => Object.keys(plans).length > 0, 'must list at least one plan'),
    topUpPacks: z.record(
      z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'pack ids are 1-64 characters of letters, digits and _.-'),
      z.strictObject({
        priceId: stripePriceId,
        credits: creditsSchema.refine((c) => c > 0n, 'must be more than 0'),
        amountCents: cents,
      }),
    ),
  })
  .superRefine((file, ctx) => {
    checkPlanTraits(file.plans, ctx);
    const seen = new Map<string, string>();
    for (const [id, pack] of Object.entries(file.topUpPacks)) {
      const other = seen.get(pack.priceId);
      if (other !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['topUpPacks', id, 'priceId'], message: `is also the price of pack ${other}` });
      }
      seen.set(pack.priceId, id);
    }
  });

/** The traits that must agree with each other and with the other plans (a Stripe price names one plan). */
function checkPlanTraits(plans: Record<string, z.output<typeof planSchema>>, ctx: z.RefinementCtx): void {
  const prices = new Map<string, string>();
  for (const [id, plan] of Object.entries(plans)) {
    const at = (...path: string[]) => ['plans', id, ...path];
    if (plan.allowanceTrigger === 'paid_invoice' && plan.billing.source !== 'stripe_subscription') {
      ctx.addIssue({ code: 'custom', path: at('allowanceTrigger'), message: 'paid_invoice needs billing.source stripe_subscription' });
    }
    if (plan.billing.source !== 'stripe_subscription') continue;
    if (plan.adminOnly) ctx.addIssue({ code: 'custom', path: at('adminOnly'), message: 'a Stripe-billed plan is set by its subscription' });
    const fallback = plans[plan.billing.fallbackPlan];
    if (!fallback || fallback.billing.source !== 'none' || fallback.adminOnly) {
      ctx.addIssue({
        code: 'custom',
        path: at('billing', 'fallbackPlan'),
        message: 'must be a plan of this file billed by nobody and not admin-only',
      });
    }
    for (const key of ['basePrice', 'seatPrice'] as const) {
      const priceId = plan.billing[key].priceId;
      const other = prices.get(priceId);
      if (other !== undefined) {
        ctx.addIssue({ code: 'custom', path: at('billing', key, 'priceId'), message: `is also a price of ${other}` });
      }
      prices.set(priceId, `${id}.${key}`);
    }
  }
}

/** Per-account overrides as stored and sent (JSON): any overridable field; null means unlimited. */
export const planOverridesSchema = z.strictObject(overridableShape).partial();
export type PlanOverrides = z.input<typeof planOverridesSchema>;

export type PlanBilling = z.output<typeof billingSchema>;
export type StripeBilling = Extract<PlanBilling, { source: 'stripe_subscription' }>;
/** A plan billed by a Stripe subscription. */
export type StripeBilledPlan = Plan & { billing: StripeBilling };

export interface Plan {
  id: PlanId;
  name: string;
  /** Who bills the plan (and, for a Stripe subscription, its prices and the plan it falls back to). */
  billing: PlanBilling;
  /** When the period's included credits are granted. */
  allowanceTrigger: AllowanceTrigger;
  /** Set by an admin only: Stripe never moves an account on or off it. */
  adminOnly: boolean;
  /** Credits granted each period, in micro-credits. They do not roll over. */
  includedCreditsMicros: bigint;
  period: PeriodKind;
  /** Runtime launches per period; null = unlimited. */
  runsPerPeriod: number | null;
  /** Distinct agent ids that launched a runtime in the period; null = unlimited. */
  agentsPerPeriod: number | null;
  /** Runtimes reserved or running at once; null = unlimited. */
  concurrentRuntimes: number | null;
  sizeClasses: readonly SizeClass[];
  /** Whether accelerators are allowed at all (a GPU environment also needs its size class listed). */
  gpus: boolean;
  topUps: boolean;
  /** Per ancillary item, the quantity included each calendar month, in micro-units of the item's unit. */
  ancillaryIncluded: Readonly<Partial<Record<AncillaryPriceKey, bigint>>>;
}

export interface TopUpPack {
  id: string;
  priceId: string;
  creditsMicros: bigint;
  amountCents: number;
}

const NO_PRICES = { basePrice: { priceId: '', unitAmountCents: 0 }, seatPrice: { priceId: '', unitAmountCents: 0 } };

function toPlan(id: PlanId, fields: z.output<typeof planSchema>): Plan {
  return {
    id,
    name: fields.name,
    billing: Object.freeze(fields.billing),
    allowanceTrigger: fields.allowanceTrigger,
    adminOnly: fields.adminOnly,
    includedCreditsMicros: fields.includedCredits,
    period: fields.period,
    runsPerPeriod: fields.runsPerPeriod,
    agentsPerPeriod: fields.agentsPerPeriod,
    concurrentRuntimes: fields.concurrentRuntimes,
    sizeClasses: Object.freeze([...fields.sizeClasses]),
    gpus: fields.gpus,
    topUps: fields.topUps,
    ancillaryIncluded: Object.freeze({ ...fields.ancillaryIncluded }),
  };
}

/** The plan defaults of the plans file, and each account's effective plan (defaults + overrides). */
export class PlanCatalog {
  private readonly plans: ReadonlyMap<PlanId, Plan>;
  private readonly packs: ReadonlyMap<string, TopUpPack>;
  private readonly packsByPrice: ReadonlyMap<string, TopUpPack>;
  /** US cents per credit: what a credit is worth where a dollar amount and credits meet (top-ups, statements). */
  readonly centsPerCredit: number;

  constructor(file: z.output<typeof plansFileSchema>) {
    this.plans = new Map(Object.entries(file.plans).map(([id, fields]) => [id, Object.freeze(toPlan(id, fields))]));
    const packs = Object.entries(file.topUpPacks).map(([id, p]): TopUpPack =>
      Object.freeze({ id, priceId: p.priceId, creditsMicros: p.credits, amountCents: p.amountCents }),
    );
    this.packs = new Map(packs.map((p) => [p.id, p]));
    this.packsByPrice = new Map(packs.map((p) => [p.priceId, p]));
    this.centsPerCredit = file.credit.centsPerCredit;
  }

  /** Validates a parsed plans document; `source` (a file name) prefixes every problem. */
  static parse(json: unknown, source = 'plans'): PlanCatalog {
    const parsed = plansFileSchema.safeParse(json);
    if (!parsed.success) {
      throw new ConfigError(parsed.error.issues.map((i) => `${source}: ${i.path.map(String).join('.') || '(root)'}: ${i.message}`));
    }
    return new PlanCatalog(parsed.data);
  }

  static fromFile(path: string): PlanCatalog {
    return PlanCatalog.parse(readJsonFile(path, 'PLANS_FILE'), path);
  }

  /** A plan's defaults. */
  plan(id: PlanId): Plan {
    const plan = this.plans.get(id);
    if (!plan) throw new RangeError(`unknown plan ${String(id)}; plans are ${this.planIds().join(', ')}`);
    return plan;
  }

  /** The plan ids, in the file's order. */
  planIds(): PlanId[] {
    return [...this.plans.keys()];
  }

  has(id: unknown): id is PlanId {
    return typeof id === 'string' && this.plans.has(id);
  }

  /** A plan id field of a request: one of the catalog's (the message of any other names them all). */
  planIdSchema(): z.ZodType<PlanId> {
    return z.enum(this.planIds() as [PlanId, ...PlanId[]]);
  }

  /** `schema` with its `plan` checked against the catalog's ids, with the same finding as an enum of them. */
  withPlanIds<S extends z.ZodObject<{ plan: z.ZodType<PlanId> }>>(schema: S): S {
    return schema.extend({ plan: this.planIdSchema() }) as unknown as S;
  }

  /** The plans with a trait, in the file's order. */
  plansWhere(test: (plan: Plan) => boolean): Plan[] {
    return [...this.plans.values()].filter(test);
  }

  /** The plans billed by a Stripe subscription, in the file's order. */
  stripeBilledPlans(): StripeBilledPlan[] {
    return [...this.plans.values()].filter((p): p is StripeBilledPlan => p.billing.source === 'stripe_subscription');
  }

  /** The Stripe terms of a plan billed by a Stripe subscription; null for any other plan. */
  stripeBilling(id: PlanId): StripeBilling | null {
    const billing = this.plans.get(id)?.billing;
    return billing?.source === 'stripe_subscription' ? billing : null;
  }

  /** Whether a Stripe price is the per-seat price of a plan (its item's quantity is the seat count). */
  isSeatPrice(priceId: string | null | undefined): boolean {
    return this.stripeBilledPlans().some((p) => p.billing.seatPrice.priceId === priceId);
  }

  /**
   * The prices a stored invoice's amount is computed with (invoices keep their seat quantity, not their
   * amount): those of the account's plan when Stripe bills it; for an account whose subscription ended,
   * those of the plan falling back to its plan (the first in the file when several do).
   */
  invoicePrices(planId: PlanId): Pick<StripeBilling, 'basePrice' | 'seatPrice'> {
    const own = this.stripeBilling(planId);
    if (own) return own;
    const billed = this.stripeBilledPlans().map((p) => p.billing);
    return billed.find((b) => b.fallbackPlan === planId) ?? billed[0] ?? NO_PRICES;
  }

  /** The Stripe-billed plan a subscription is for: the one whose base or seat price is among its prices. */
  planOfPrices(priceIds: readonly (string | null)[]): StripeBilledPlan | undefined {
    return this.stripeBilledPlans().find(
      (p) => priceIds.includes(p.billing.basePrice.priceId) || priceIds.includes(p.billing.seatPrice.priceId),
    );
  }

  /**
   * The plan an account actually has: the defaults with its overrides on top. A field absent from
   * the overrides keeps the default; `null` overrides a quota to unlimited. Overrides are validated
   * (findings under `overrides.`), so a bad stored value is refused rather than half applied.
   */
  effective(planId: PlanId, overrides?: PlanOverrides | null): Plan {
    const base = this.plan(planId);
    if (overrides === undefined || overrides === null) return base;
    const parsed = planOverridesSchema.safeParse(overrides);
    if (!parsed.success) {
      throw BillingException.invalid(findingsOf(parsed.error, 'overrides'), 'The plan overrides are invalid');
    }
    const o = parsed.data;
    return Object.freeze({
      ...base,
      ...(o.includedCredits !== undefined ? { includedCreditsMicros: o.includedCredits } : {}),
      ...(o.period !== undefined ? { period: o.period } : {}),
      ...(o.runsPerPeriod !== undefined ? { runsPerPeriod: o.runsPerPeriod } : {}),
      ...(o.agentsPerPeriod !== undefined ? { agentsPerPeriod: o.agentsPerPeriod } : {}),
      ...(o.concurrentRuntimes !== undefined ? { concurrentRuntimes: o.concurrentRuntimes } : {}),
      ...(o.sizeClasses !== undefined ? { sizeClasses: Object.freeze([...o.sizeClasses]) } : {}),
      ...(o.gpus !== undefined ? { gpus: o.gpus } : {}),
      ...(o.topUps !== undefined ? { topUps: o.topUps } : {}),
      ...(o.ancillaryIncluded !== undefined ? { ancillaryIncluded: Object.freeze({ ...o.ancillaryIncluded }) } : {}),
    });
  }

  topUpPacks(): TopUpPack[] {
    return [...this.packs.values()];
  }

  topUpPack(id: string): TopUpPack | undefined {
    return this.packs.get(id);
  }

  /** The pack a Stripe price sells (e.g. from a Checkout session's line item). */
  topUpPackByPriceId(priceId: string): TopUpPack | undefined {
    return this.packsByPrice.get(priceId);
  }
}

/**
 * What a plan does not allow in a (valid) environment, for DL_BILLING_PLAN_FORBIDS: a size class
 * not in the plan, GPUs on a plan without them. Field paths as in the request (`prefix`).
 */
export function planFindings(plan: Plan, environment: Pick<Environment, 'sizeClass' | 'accelerator'>, prefix = 'environment'): Finding[] {
  const findings: Finding[] = [];
  if (!plan.sizeClasses.includes(environment.sizeClass)) {
    findings.push({
      field: `${prefix}.sizeClass`,
      message: `${environment.sizeClass} is not in the ${plan.name} plan (allowed: ${plan.sizeClasses.join(', ') || 'none'})`,
    });
  }
  if (environment.accelerator && !plan.gpus) {
    findings.push({ field: `${prefix}.accelerator`, message: `GPUs are not in the ${plan.name} plan` });
  }
  return findings;
}

export function planForbidsException(findings: Finding[]): BillingException {
  return new BillingException('DL_BILLING_PLAN_FORBIDS', 'The account plan does not allow this environment', findings);
}
