import { formatCredits } from 'src/common/money';
import type { StatementEntry } from './ledger.types';

const SOURCE_NAMES: Record<string, string> = {
  plan_allowance: 'plan allowance',
  top_up: 'top-up',
  admin: 'admin grant',
  promotion: 'promotion',
};

/** "admin grant g1", "plan allowance grant g2", "grant g3" (no source): the source's name says "grant" once. */
function grantNamed(source: unknown, grantId: unknown): string {
  if (source === null || source === undefined || source === '') return `grant ${String(grantId)}`;
  const name = SOURCE_NAMES[String(source)] ?? String(source);
  return `${name}${name.endsWith('grant') ? '' : ' grant'} ${String(grantId)}`;
}

const credits = (v: unknown): string => formatCredits(BigInt(String(v ?? '0')));

function date(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return new Date(String(v)).toISOString();
}

function parts(list: unknown): string {
  if (!Array.isArray(list) || list.length === 0) return '';
  const described = (list as { grantId: string; amount: unknown; source?: string | null; expiresAt?: unknown }[]).map((p) => {
    const expiry = date(p.expiresAt);
    return `${credits(p.amount)} from ${grantNamed(p.source, p.grantId)}${expiry ? ` (expires ${expiry})` : ''}`;
  });
  return `: ${described.join(', ')}`;
}

function returned(e: Record<string, unknown>): string {
  const bits: string[] = [];
  const expired = Array.isArray(e.expiredAtOnce) ? (e.expiredAtOnce as { grantId: string; amount: unknown }[]) : [];
  if (expired.length > 0) {
    bits.push(`${expired.map((p) => `${credits(p.amount)} of expired grant ${p.grantId}`).join(', ')} expired at once`);
  }
  if (BigInt(String(e.debtRepaid ?? '0')) > 0n) bits.push(`${credits(e.debtRepaid)} paid debt`);
  return bits.length > 0 ? ` (${bits.join('; ')})` : '';
}

/** One sentence that says what a ledger transaction did and why, from the facts it recorded. */
export function explain(t: Pick<StatementEntry, 'kind' | 'amount' | 'holdId' | 'grantId' | 'reference' | 'explanation'>): string {
  const e = t.explanation;
  const ref = t.reference ? ` for ${t.reference}` : '';
  switch (t.kind) {
    case 'reservation':
      return e.increase
        ? `Reserved ${credits(e.held)} more credits${ref} (hold ${t.holdId}, now ${credits(e.holdAmount)})${parts(e.parts)}.`
        : `Reserved ${credits(e.held)} credits${ref} (hold ${t.holdId})${parts(e.parts)}.`;
    case 'settlement':
      return `Charged ${credits(e.charged)} of ${credits(e.held)} credits held${ref} (hold ${t.holdId}); ${credits(e.released)} released${returned(e)}${
        e.reason ? ` — ${String(e.reason)}` : ''
      }.`;
    case 'void':
      return `Voided hold ${t.holdId}${ref}: ${credits(e.released)} credits released, nothing charged${e.reason ? ` (${String(e.reason)})` : ''}${returned(e)}.`;
    case 'release':
      return `Hold ${t.holdId}${ref} expired unsettled: ${credits(e.released)} credits released${returned(e)}.`;
    case 'grant':
    case 'top-up': {
      const expiry = date(e.expiresAt);
      const debt = BigInt(String(e.repaid ?? '0')) > 0n ? `; ${credits(e.repaid)} paid debt` : '';
      return `${t.kind === 'top-up' ? 'Top-up' : `Granted (${SOURCE_NAMES[String(e.source)] ?? String(e.source)})`}: ${credits(t.amount)} credits${
        expiry ? `, expiring ${expiry}` : ', not expiring'
      } — ${String(e.reason ?? '')}${debt}.`;
    }
    case 'expiry':
      return `${credits(e.expired)} unused credits of ${grantNamed(e.source, t.grantId)} expired at ${date(e.expiresAt) ?? '?'}.`;
    case 'adjustment': {
      if (e.clawedBack !== undefined) return clawBack(t, e);
      const delta = BigInt(String(e.delta ?? '0'));
      const why = e.reason ? ` (${String(e.reason)})` : '';
      if (delta > 0n) {
        const debt = BigInt(String(e.debt ?? '0')) > 0n ? `; ${credits(e.debt)} could not be paid and is owed` : '';
        return `Charge of hold ${t.holdId}${ref} corrected from ${credits(e.previousCharge)} to ${credits(e.charged)}${why}: ${credits(delta)} more charged${debt}.`;
      }
      const cancelled = BigInt(String(e.debtCancelled ?? '0')) > 0n ? `; ${credits(e.debtCancelled)} of debt cancelled` : '';
      return `Charge of hold ${t.holdId}${ref} corrected from ${credits(e.previousCharge)} to ${credits(e.charged)}${why}: ${credits(-delta)} refunded${cancelled}${returned(e)}.`;
    }
    default:
      return `${t.kind} of ${credits(t.amount)} credits.`;
  }
}

/** Credits taken back: a top-up whose payment Stripe reversed (a refund or a dispute), or a cycle paid after its subscription ended. */
function clawBack(t: Pick<StatementEntry, 'grantId' | 'reference'>, e: Record<string, unknown>): string {
  const taken = credits(e.clawedBack);
  if (e.cause === 'paid_after_end') {
    return `Clawed back ${taken} credits of grant ${t.grantId}: invoice ${String(e.invoiceId)} was paid after subscription ${String(e.subscriptionId)} ended, and an ended subscription's cycle grants nothing.`;
  }
  if (!e.topUpSession) return `Clawed back ${taken} credits of grant ${t.grantId}${e.reason ? ` (${String(e.reason)})` : ''}.`;
  const how = e.cause === 'dispute' ? `was disputed${e.disputeId ? ` (dispute ${String(e.disputeId)})` : ''}` : 'was refunded';
  const reversed = BigInt(String(e.reversed ?? e.clawedBack));
  const short = reversed > BigInt(String(e.clawedBack)) ? `; ${credits(reversed)} reversed, only ${taken} of them left unspent` : '';
  return `Clawed back ${taken} credits of the top-up paid in Checkout session ${String(e.topUpSession)} (grant ${t.grantId}): Stripe charge ${String(e.chargeId)} ${how}${short}.`;
}
