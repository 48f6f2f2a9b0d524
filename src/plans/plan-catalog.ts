import { z } from 'zod';
import { ConfigError } from '../common/config/config';
import { BillingException, type Finding } from '../common/errors/billing.exception';
import { findingsOf } from '../common/http/zod-validation.pipe';
import { parseCredits } from '../common/money';
import { ANCILLARY_PRICE_KEYS, type AncillaryPriceKey } from '../pricing/ancillary-prices';
import { sizeClassSchema, type Environment, type SizeClass } from '../pricing/environment';
import { readJsonFile } from '../pricing/rate-card';
import { PERIOD_KINDS, type PeriodKind } from './periods';

import { PLAN_IDS, type PlanId } from './plan-ids';

export { isPlanId, PLAN_IDS, type PlanId } from './plan-ids';

/** Credits in the contract's JSON form ("50.000000"), as micro-credits. */
const creditsSchema = z
  .string({ error: 'must be credits as a decimal string with 6 decimals, e.g. "50.000000"' })
  .regex(/^\d{1,12}\.\d{6}$/, 'must be credits as a decimal string with 6 decimals, e.g. "50.000000"')
  .transform((text) => parseCredits(text) as bigint);

/** A quota: a count, or null for unlimited. */
const limitSchema = z.number().int('must be an integer or null (unlimited)').min(0, 'must not be negative').nullable();

const sizeClassesSchema = z
  .array(sizeClassSchema)
  .refine((list) => new Set(list).size === list.length, 'must not repeat a size class');

const cents = z.number().int().positive();

/** A quantity in an item's unit (GiB-months, GiB, GiB-hours) with 6 decimals, as micro-units. */
const quantitySchema = z
  .string({ error: 'must be a quantity as a decimal string with 6 decimals, e.g. "10.000000"' })
  .regex(/^\d{1,12}\.\d{6}$/, 'must be a quantity as a decimal string with 6 decimals, e.g. "10.000000"')
  .transform((text) => parseCredits(text) as bigint);

/** Per item, the quantity a plan includes each calendar month ("included up to X"); absent: none. */
const ancillaryIncludedSchema = z.strictObject(
  Object.fromEntries(ANCILLARY_PRICE_KEYS.map((k) => [k, quantitySchema.optional()])) as Record<AncillaryPriceKey, z.ZodOptional<typeof quantitySchema>>,
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

const teamStripeSchema = z.strictObject({
  currency: z.literal('usd'),
  basePrice: z.strictObject({ priceId: stripePriceId, unitAmountCents: cents }),
  seatPrice: z.strictObject({ priceId: stripePriceId, unitAmountCents: cents }),
});

const planSchema = z.strictObject({ name: z.string().min(1), ...overridableShape, ancillaryIncluded: ancillaryIncludedSchema.default({}) });

export const plansFileSchema = z
  .strictObject({
    credit: creditValueSchema,
    plans: z.strictObject({
      free: planSchema,
      team: planSchema.extend({ stripe: teamStripeSchema }),
      enterprise: planSchema,
    }),
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
    const seen = new Map<string, string>();
    for (const [id, pack] of Object.entries(file.topUpPacks)) {
      const other = seen.get(pack.priceId);
      if (other !== undefined) {
        ctx.addIssue({ code: 'custom', path: ['topUpPacks', id, 'priceId'], message: `is also the price of pack ${other}` });
      }
      seen.set(pack.priceId, id);
    }
  });

/** Per-account overrides as stored and sent (JSON): any overridable field; null means unlimited. */
export const planOverridesSchema = z.strictObject(overridableShape).partial();
export type PlanOverrides = z.input<typeof planOverridesSchema>;

export interface Plan {
  id: PlanId;
  name: string;
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

export interface StripePrice {
  priceId: string;
  unitAmountCents: number;
}

export interface TeamStripePrices {
  currency: 'usd';
  /** The $49/month base fee. */
  basePrice: StripePrice;
  /** The $15/month per-seat price; its item quantity is the active seat count. */
  seatPrice: StripePrice;
}

export interface TopUpPack {
  id: string;
  priceId: string;
  creditsMicros: bigint;
  amountCents: number;
}

function toPlan(id: PlanId, fields: z.output<typeof planSchema>): Plan {
  return {
    id,
    name: fields.name,
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
  readonly teamStripe: TeamStripePrices;
  /** US cents per credit: what a credit is worth where a dollar amount and credits meet (top-ups, statements). */
  readonly centsPerCredit: number;

  constructor(file: z.output<typeof plansFileSchema>) {
    this.plans = new Map(PLAN_IDS.map((id) => [id, Object.freeze(toPlan(id, file.plans[id]))]));
    const packs = Object.entries(file.topUpPacks).map(
      ([id, p]): TopUpPack => Object.freeze({ id, priceId: p.priceId, creditsMicros: p.credits, amountCents: p.amountCents }),
    );
    this.packs = new Map(packs.map((p) => [p.id, p]));
    this.packsByPrice = new Map(packs.map((p) => [p.priceId, p]));
    this.teamStripe = file.plans.team.stripe;
    this.centsPerCredit = file.credit.centsPerCredit;
  }

  /** Validates a parsed plans document; `source` (a file name) prefixes every problem. */
  static parse(json: unknown, source = 'plans'): PlanCatalog {
    const parsed = plansFileSchema.safeParse(json);
    if (!parsed.success) {
      throw new ConfigError(
        parsed.error.issues.map((i) => `${source}: ${i.path.map(String).join('.') || '(root)'}: ${i.message}`),
      );
    }
    return new PlanCatalog(parsed.data);
  }

  static fromFile(path: string): PlanCatalog {
    return PlanCatalog.parse(readJsonFile(path, 'PLANS_FILE'), path);
  }

  /** A plan's defaults. */
  plan(id: PlanId): Plan {
    const plan = this.plans.get(id);
    if (!plan) throw new RangeError(`unknown plan ${String(id)}; plans are ${PLAN_IDS.join(', ')}`);
    return plan;
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
