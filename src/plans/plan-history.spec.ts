import { describe, expect, it } from 'vitest';
import { termsBefore } from './plan-history';

describe('termsBefore: an account plan terms before its recorded changes', () => {
  const now = { plan: 'enterprise', overrides: null };

  it('is the terms now when nothing changed since', () => {
    expect(termsBefore(now, [])).toEqual(now);
  });

  it("undoes an admin's move (its before has the plan and the overrides it dropped)", () => {
    const move = {
      before: { plan: 'team', overrides: { includedCredits: '800.000000' }, billingCycleAnchor: null },
      after: { plan: 'enterprise', overrides: null, billingCycleAnchor: null },
    };
    expect(termsBefore(now, [move])).toEqual({ plan: 'team', overrides: { includedCredits: '800.000000' } });
  });

  it('undoes changes newest first, back to the oldest', () => {
    const changes = [
      // newest: Team (800) -> Enterprise
      { before: { plan: 'team', overrides: { includedCredits: '800.000000' } }, after: { plan: 'enterprise', overrides: null } },
      // oldest: Stripe moved it Free -> Team (Free had no overrides: not recorded)
      { before: { plan: 'free', billingCycleAnchor: null }, after: { plan: 'team', billingCycleAnchor: '2026-12-01T00:00:00.000Z' } },
    ];
    expect(termsBefore(now, changes)).toEqual({ plan: 'free', overrides: null });
    expect(termsBefore(now, changes.slice(0, 1))).toEqual({ plan: 'team', overrides: { includedCredits: '800.000000' } });
  });

  it('keeps the overrides through a change that kept the plan and did not record them (a new anchor, a new name)', () => {
    const team = { plan: 'team', overrides: { includedCredits: '700.000000' } };
    const anchor = {
      before: { plan: 'team', billingCycleAnchor: null },
      after: { plan: 'team', billingCycleAnchor: '2026-12-01T00:00:00.000Z' },
    };
    const renamed = { before: { kind: 'organization', plan: 'team', name: 'a' }, after: { kind: 'organization', plan: 'team', name: 'b' } };
    expect(termsBefore(team, [anchor, renamed])).toEqual(team);
  });

  it('takes a change of plan that recorded no overrides as one made without any', () => {
    const controlPlane = {
      before: { kind: 'organization', plan: 'free', name: null },
      after: { kind: 'organization', plan: 'team', name: null },
    };
    expect(termsBefore({ plan: 'team', overrides: { includedCredits: '900.000000' } }, [controlPlane])).toEqual({
      plan: 'free',
      overrides: null,
    });
  });

  it("skips an account's creation (nothing before it)", () => {
    expect(termsBefore(now, [{ before: null, after: { kind: 'organization', plan: 'enterprise', name: null } }])).toEqual(now);
  });
});
