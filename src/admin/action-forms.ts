import { randomUUID } from 'node:crypto';
import type { BillingException, Finding } from 'src/common/errors/billing.exception';
import { field, focusFirstInvalid } from './form-fields';
import { esc, hidden, problem, shell, type Viewer } from './render';

/**
 * The fields of the account page's action forms, written once: the account page shows them with
 * its defaults, and an action refused with a 400 shows them again with what was submitted and each
 * finding beside its field (`correctionPage`).
 */
export type Values = Record<string, string | undefined>;

export function grantFields(values: Values, findings: Finding[] = []): string {
  // A resubmitted form keeps its idempotency key: the grant it asks for is still granted once.
  const key = /^[A-Za-z0-9-]{8,64}$/.test(values.idempotencyKey ?? '') ? values.idempotencyKey : randomUUID();
  return `${hidden({ idempotencyKey: key })}${field(
    { id: 'grant-credits', name: 'credits', label: 'Credits', attrs: 'required inputmode="decimal" placeholder="20.000000" size="12"' },
    values.credits,
    findings,
  )}
${field({ id: 'grant-reason', name: 'reason', label: 'Reason (shown in the ledger)', attrs: 'required size="36"' }, values.reason, findings)}
${field(
  {
    id: 'grant-expires',
    name: 'expiresAt',
    label: 'Expires at (optional, ISO 8601 UTC)',
    attrs: 'placeholder="2033-01-01T00:00:00Z" size="24"',
  },
  values.expiresAt,
  findings,
)}`;
}

export function planFields(planIds: readonly string[], values: Values, findings: Finding[] = []): string {
  return `${field(
    { id: 'plan-plan', name: 'plan', label: 'Plan', kind: 'select', options: planIds.map((p) => [p, p] as const) },
    values.plan,
    findings,
  )}
${field(
  { id: 'plan-overrides', name: 'overrides', label: 'Overrides (JSON, empty: none)', kind: 'textarea', attrs: 'rows="3" cols="40"' },
  values.overrides,
  findings,
)}`;
}

export function limitFields(values: Values, findings: Finding[] = []): string {
  return `${field(
    { id: 'limit-credits', name: 'credits', label: 'Monthly limit in credits (empty: no limit)', attrs: 'inputmode="decimal" size="12"' },
    values.credits,
    findings,
  )}
${field({ id: 'limit-thresholds', name: 'thresholds', label: 'Alert thresholds (%)', attrs: 'size="12"' }, values.thresholds, findings)}
${field(
  { id: 'limit-user', name: 'userId', label: 'Member (empty: whole account)', attrs: 'size="16"', also: ['scope'] },
  values.userId,
  findings,
)}`;
}

export function suspendFields(values: Values, findings: Finding[] = []): string {
  // `cause`: non_payment for the waiver of a suspension for non-payment; absent for an admin's own.
  const waiver = values.cause === 'non_payment';
  return `${hidden({ suspended: values.suspended })}${waiver ? hidden({ cause: 'non_payment' }) : ''}${field(
    { id: waiver ? 'waive-reason' : 'suspend-reason', name: 'reason', label: 'Reason', attrs: 'required size="36"' },
    values.reason,
    findings,
  )}`;
}

/** An action form as a page of its own, shown again after a 400 (what a form needs to be drawn there). */
export interface CorrectableForm {
  title: string;
  button: string;
  danger?: boolean;
  fields: (values: Values, findings: Finding[]) => string;
}

/**
 * A refused action's form again, with what was submitted and every finding: in the summary (as the
 * API's 400, read out at once) and beside its field, where the keyboard's focus starts.
 */
export function correctionPage(
  viewer: Viewer,
  form: CorrectableForm,
  action: string,
  cancel: string,
  values: Values,
  error: BillingException,
): string {
  const controls = `<form method="post" action="${esc(action)}" class="action">${hidden({ csrf: viewer.csrf })}${form.fields(values, error.findings)}<button type="submit"${
    form.danger ? ' class="danger"' : ''
  }>${esc(form.button)}…</button> <a href="${esc(cancel)}">Cancel</a></form>`;
  return shell(
    `${form.title}: please correct`,
    viewer,
    'accounts',
    `<section id="correct" aria-labelledby="correct-title"><h2 id="correct-title">${esc(form.title)}: please correct the form</h2>${problem(error)}${focusFirstInvalid(controls)}</section>`,
  );
}
