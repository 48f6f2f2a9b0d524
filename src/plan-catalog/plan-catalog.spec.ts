import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError } from 'src/common/config/config';
import { BillingException } from 'src/common/errors/billing.exception';
import { loadRateCardFile } from 'src/pricing/rate-card';
import { planFindings, PlanCatalog, type PlanId } from './plan-catalog';

const shipped = JSON.parse(readFileSync('config/plans.json', 'utf8')) as Record<string, any>;
const catalog = PlanCatalog.fromFile('config/plans.json');

function problemsOf(json: unknown): string[] {
  try {
    PlanCatalog.parse(json, 'p.json');
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

const withPlan = (id: string, patch: Record<string, unknown>) => ({
  ...shipped,
  plans: { ...shipped.plans, [id]: { ...shipped.plans[id], ...patch } },
});

describe('the shipped config/plans.json', () => {
  it('has the contract Free defaults', () => {
    expect(catalog.plan('free')).toEqual({
      id: 'free',
      name: 'Free',
      billing: { source: 'none' },
      allowanceTrigger: 'period_start',
      adminOnly: false,
      includedCreditsMicros: 50_000_000n,
      period: 'calendar_month',
      runsPerPeriod: 500,
      agentsPerPeriod: 3,
      concurrentRuntimes: 2,
      sizeClasses: ['small', 'medium'],
      gpus: false,
      topUps: true,
      ancillaryIncluded: {
        snapshot_gib_month: 5_000_000n,
        disk_gib_month: 10_000_000n,
        egress_gib: 10_000_000n,
        paused_ram_gib_hour: 100_000_000n,
      },
    });
  });

  it('says what a credit is worth, and the small class then costs what the provider record says ($0.30/h for 1 vCPU, 1 GiB)', () => {
    expect(catalog.centsPerCredit).toBe(30);
    const cards = loadRateCardFile('config/rate-card.json');
    for (const card of cards) {
      expect(card.resources.small).toMatchObject({ cpu: 1, memoryGi: 1 });
      // µcr/h × cents per credit / 1,000,000 = cents per hour
      expect((card.sizeClasses.small * BigInt(catalog.centsPerCredit)) / 1_000_000n).toBe(30n);
    }
  });

  it('sells every top-up pack at or below the value of its credits (no pack charges more than a credit is worth)', () => {
    for (const pack of catalog.topUpPacks()) {
      expect(BigInt(pack.amountCents) * 1_000_000n).toBeLessThanOrEqual(pack.creditsMicros * BigInt(catalog.centsPerCredit));
    }
    expect(catalog.topUpPack('credits-100')?.amountCents).toBe(100 * catalog.centsPerCredit);
  });

  it('refuses a file without the value of a credit, or with an included amount that is not a quantity', () => {
    const { credit: _credit, ...withoutCredit } = shipped;
    expect(problemsOf(withoutCredit)).toContain('p.json: credit: Invalid input: expected object, received undefined');
    expect(problemsOf(withPlan('free', { ancillaryIncluded: { egress_gib: '10' } }))).toEqual([
      'p.json: plans.free.ancillaryIncluded.egress_gib: must be a quantity as a decimal string with 6 decimals, e.g. "10.000000"',
    ]);
    expect(problemsOf(withPlan('free', { ancillaryIncluded: { cpu_hours: '1.000000' } }))[0]).toMatch(/plans\.free\.ancillaryIncluded/);
  });

  it('has the contract Team defaults and its Stripe prices ($49 base, $15 per seat)', () => {
    expect(catalog.plan('team')).toMatchObject({
      includedCreditsMicros: 500_000_000n,
      period: 'billing_cycle',
      runsPerPeriod: 5000,
      agentsPerPeriod: null,
      concurrentRuntimes: 20,
      sizeClasses: ['small', 'medium', 'large', 'gpu-small', 'gpu-large'],
      gpus: true,
      topUps: true,
    });
    expect(catalog.plan('team')).toMatchObject({ allowanceTrigger: 'paid_invoice', adminOnly: false });
    expect(catalog.stripeBilling('team')).toMatchObject({
      source: 'stripe_subscription',
      currency: 'usd',
      basePrice: { unitAmountCents: 4900 },
      seatPrice: { unitAmountCents: 1500 },
      fallbackPlan: 'free',
    });
    expect(catalog.stripeBilling('free')).toBeNull();
  });

  it("finds a subscription's plan by its prices, and tells a seat price", () => {
    const { basePrice, seatPrice } = catalog.stripeBilling('team')!;
    expect(catalog.planOfPrices([null, seatPrice.priceId])?.id).toBe('team');
    expect(catalog.planOfPrices([basePrice.priceId])?.id).toBe('team');
    expect(catalog.planOfPrices(['price_someone_elses'])).toBeUndefined();
    expect(catalog.isSeatPrice(seatPrice.priceId)).toBe(true);
    expect(catalog.isSeatPrice(basePrice.priceId)).toBe(false);
    // A Free account's past Team invoices are priced at Team's prices (Team falls back to Free).
    expect(catalog.invoicePrices('free')).toBe(catalog.stripeBilling('team'));
  });

  it('checks a plan id against the catalog with the finding an enum of its ids gives', () => {
    expect(catalog.planIds()).toEqual(['free', 'team', 'enterprise']);
    const result = catalog.planIdSchema().safeParse('gold');
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('Invalid option: expected one of "free"|"team"|"enterprise"');
  });

  it('has Enterprise unlimited with 0 included credits by default', () => {
    expect(catalog.plan('enterprise')).toMatchObject({
      adminOnly: true,
      billing: { source: 'none' },
      includedCreditsMicros: 0n,
      runsPerPeriod: null,
      agentsPerPeriod: null,
      concurrentRuntimes: null,
      gpus: true,
      topUps: true,
    });
  });

  it('has top-up packs, found by id and by Stripe price', () => {
    expect(catalog.topUpPacks().length).toBeGreaterThan(0);
    const pack = catalog.topUpPack('credits-100');
    expect(pack).toMatchObject({ id: 'credits-100', creditsMicros: 100_000_000n });
    expect(catalog.topUpPackByPriceId(pack!.priceId)).toBe(pack);
    expect(catalog.topUpPack('nope')).toBeUndefined();
    expect(catalog.topUpPack('constructor')).toBeUndefined();
  });
});

describe('PlanCatalog.parse', () => {
  it('names the file and the path of every bad value', () => {
    const problems = problemsOf({
      ...withPlan('free', { includedCredits: 50, runsPerPeriod: -1, sizeClasses: ['small', 'huge'] }),
      topUpPacks: { bad: { priceId: 'p', credits: '0.000000', amountCents: 100 } },
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^p\.json: plans\.free\.includedCredits: must be credits/),
        expect.stringMatching(/^p\.json: plans\.free\.runsPerPeriod: must not be negative/),
        expect.stringMatching(/^p\.json: plans\.free\.sizeClasses\.1: must be one of/),
        expect.stringMatching(/^p\.json: topUpPacks\.bad\.credits: must be more than 0/),
      ]),
    );
  });

  it('needs traits that agree: a billing source, an invoice-paid allowance only with Stripe, a fallback billed by nobody, prices of one plan', () => {
    const stripe = shipped.plans.team.billing;
    expect(problemsOf({ ...shipped, plans: {} })).toEqual(['p.json: plans: must list at least one plan']);
    expect(problemsOf(withPlan('team', { billing: undefined }))).toEqual([expect.stringContaining('plans.team.billing')]);
    expect(problemsOf(withPlan('free', { allowanceTrigger: 'paid_invoice' }))).toEqual([
      'p.json: plans.free.allowanceTrigger: paid_invoice needs billing.source stripe_subscription',
    ]);
    expect(problemsOf(withPlan('team', { billing: { ...stripe, fallbackPlan: 'enterprise' } }))).toEqual([
      'p.json: plans.team.billing.fallbackPlan: must be a plan of this file billed by nobody and not admin-only',
    ]);
    expect(problemsOf(withPlan('team', { adminOnly: true }))).toEqual([
      'p.json: plans.team.adminOnly: a Stripe-billed plan is set by its subscription',
    ]);
    const copy = { ...shipped.plans.team, name: 'Team copy' };
    expect(problemsOf({ ...shipped, plans: { ...shipped.plans, copy } })).toEqual([
      'p.json: plans.copy.billing.basePrice.priceId: is also a price of team.basePrice',
      'p.json: plans.copy.billing.seatPrice.priceId: is also a price of team.seatPrice',
    ]);
    expect(problemsOf({ ...shipped, plans: { ...shipped.plans, Gold: shipped.plans.free } })[0]).toMatch(/^p\.json: plans\.Gold: /);
  });

  it('needs unique pack prices and no unknown keys', () => {
    expect(problemsOf(withPlan('free', { colour: 'blue' }))).toEqual([expect.stringContaining('plans.free')]);
    expect(
      problemsOf({
        ...shipped,
        topUpPacks: {
          a: { priceId: 'price_same', credits: '1.000000', amountCents: 100 },
          b: { priceId: 'price_same', credits: '2.000000', amountCents: 200 },
        },
      }),
    ).toEqual([expect.stringContaining('topUpPacks.b.priceId: is also the price of pack a')]);
    expect(problemsOf(withPlan('free', { sizeClasses: ['small', 'small'] }))).toEqual([expect.stringContaining('plans.free.sizeClasses')]);
  });

  it('fails naming PLANS_FILE when the file cannot be read', () => {
    expect(() => PlanCatalog.fromFile('/nonexistent/plans.json')).toThrow(/PLANS_FILE: cannot read \/nonexistent\/plans\.json/);
  });
});

describe('effective', () => {
  it('is the defaults without overrides', () => {
    expect(catalog.effective('free')).toEqual(catalog.plan('free'));
    expect(catalog.effective('team', null)).toEqual(catalog.plan('team'));
    expect(catalog.effective('team', {})).toEqual(catalog.plan('team'));
  });

  it('lays overrides over the defaults, field by field', () => {
    const plan = catalog.effective('enterprise', {
      includedCredits: '10000.000000',
      concurrentRuntimes: 100,
      sizeClasses: ['small', 'large'],
    });
    expect(plan).toEqual({
      ...catalog.plan('enterprise'),
      includedCreditsMicros: 10_000_000_000n,
      concurrentRuntimes: 100,
      sizeClasses: ['small', 'large'],
    });
    expect(catalog.plan('enterprise').concurrentRuntimes).toBeNull(); // defaults untouched
  });

  it('reads null as unlimited and an absent field as the default', () => {
    const plan = catalog.effective('free', { runsPerPeriod: null, agentsPerPeriod: 10 });
    expect(plan.runsPerPeriod).toBeNull();
    expect(plan.agentsPerPeriod).toBe(10);
    expect(plan.concurrentRuntimes).toBe(2);
  });

  it('can change the period kind and turn GPUs on', () => {
    const plan = catalog.effective('enterprise', { period: 'billing_cycle', gpus: false, topUps: false });
    expect(plan).toMatchObject({ period: 'billing_cycle', gpus: false, topUps: false });
  });

  it('refuses bad overrides with every finding under overrides.', () => {
    let error: unknown;
    try {
      catalog.effective('enterprise', { includedCredits: '1.5', runsPerPeriod: 2.5, name: 'x' } as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(BillingException);
    expect((error as BillingException).code).toBe('DL_BILLING_REQUEST_INVALID');
    expect((error as BillingException).findings.map((f) => f.field)).toEqual([
      'overrides.includedCredits',
      'overrides.runsPerPeriod',
      'overrides.name',
    ]);
  });

  it('refuses an unknown plan id', () => {
    expect(() => catalog.plan('gold' as PlanId)).toThrow(RangeError);
  });
});

describe('planFindings', () => {
  it('names a size class or GPU the plan does not allow', () => {
    const free = catalog.plan('free');
    expect(planFindings(free, { sizeClass: 'small' })).toEqual([]);
    expect(planFindings(free, { sizeClass: 'large' })).toEqual([
      { field: 'environment.sizeClass', message: 'large is not in the Free plan (allowed: small, medium)' },
    ]);
    expect(planFindings(free, { sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } })).toEqual([
      { field: 'environment.sizeClass', message: 'gpu-small is not in the Free plan (allowed: small, medium)' },
      { field: 'environment.accelerator', message: 'GPUs are not in the Free plan' },
    ]);
    expect(planFindings(catalog.plan('team'), { sizeClass: 'gpu-large', accelerator: { type: 'H100', count: 8, cuda: '12.8' } })).toEqual(
      [],
    );
    const noGpus = catalog.effective('enterprise', { gpus: false });
    expect(
      planFindings(noGpus, { sizeClass: 'gpu-small', accelerator: { type: 'T4', count: 1, cuda: '12.8' } }, 'data.environment'),
    ).toEqual([{ field: 'data.environment.accelerator', message: 'GPUs are not in the Enterprise plan' }]);
  });
});
