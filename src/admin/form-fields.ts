import { BillingException, type Finding } from 'src/common/errors/billing.exception';
import { esc } from './render';

/**
 * A form's controls, shown either empty (or with the page's defaults) or again after a 400 with what
 * was submitted and each finding beside its control (`aria-invalid`, `aria-describedby`), so nothing
 * has to be typed twice.
 */
export interface FieldSpec {
  id: string;
  name: string;
  label: string;
  kind?: 'input' | 'textarea' | 'select' | 'checkbox';
  /** Extra attributes, as written (`required size="12"`): never user input. */
  attrs?: string;
  /** A select's options: value and text. */
  options?: readonly (readonly [string, string])[];
  /** Findings named otherwise that belong to this control (`scope.userId` for the member field). */
  also?: readonly string[];
}

/** A submitted value as it is shown again: a NUL cannot be in an HTML document (the parser would replace it anyway). */
function shown(value: string | undefined): string {
  return esc((value ?? '').replace(/\u0000/g, '\uFFFD'));
}

/** The findings of a control: its own name, a path under it (`overrides.concurrentRuntimes`, `thresholds.1`), or an alias. */
export function findingsOf(findings: readonly Finding[], names: readonly string[]): Finding[] {
  return findings.filter((f) => names.some((n) => f.field === n || f.field.startsWith(`${n}.`) || f.field.startsWith(`${n}[`)));
}

/** One labelled control with `value`; with findings, they follow it and the control says it is invalid. */
export function field(spec: FieldSpec, value: string | undefined, findings: readonly Finding[] = []): string {
  const own = findingsOf(findings, [spec.name, ...(spec.also ?? [])]);
  const described = own.length ? ` aria-invalid="true" aria-describedby="${esc(spec.id)}-finding"` : '';
  const common = `id="${esc(spec.id)}" name="${esc(spec.name)}"${spec.attrs ? ` ${spec.attrs}` : ''}${described}`;
  let control: string;
  switch (spec.kind ?? 'input') {
    case 'textarea':
      control = `<textarea ${common}>${shown(value)}</textarea>`;
      break;
    case 'select': {
      const options = [...(spec.options ?? [])];
      // A value that is not among the options (sent by hand) is still shown as it was sent.
      if (value !== undefined && value !== '' && !options.some(([v]) => v === value)) options.push([value, value]);
      control = `<select ${common}>${options
        .map(([v, text]) => `<option value="${shown(v)}"${v === value ? ' selected' : ''}>${shown(text)}</option>`)
        .join('')}</select>`;
      break;
    }
    case 'checkbox':
      control = `<input type="checkbox" ${common} value="yes"${value === 'yes' ? ' checked' : ''}>`;
      break;
    case 'input':
      control = `<input ${common} value="${shown(value)}">`;
      break;
  }
  const label =
    spec.kind === 'checkbox'
      ? `<label class="check" for="${esc(spec.id)}">${control}${esc(spec.label)}</label>`
      : `<label for="${esc(spec.id)}">${esc(spec.label)}${control}</label>`;
  if (!own.length) return label;
  const messages = own.map((f) => (f.field === spec.name ? esc(f.message) : `<code>${esc(f.field)}</code>: ${esc(f.message)}`)).join('; ');
  return `<div class="field">${label}<p class="finding" id="${esc(spec.id)}-finding">${messages}</p></div>`;
}

/** A form shown again after a 400: the keyboard's focus starts on its first invalid control. */
export function focusFirstInvalid(form: string): string {
  return form.replace(' aria-invalid="true"', ' aria-invalid="true" autofocus');
}

/** A 400's findings, for a form shown again (any other error is not the form's to show). */
export function invalidFindings(error: unknown): Finding[] | undefined {
  return error instanceof BillingException && error.status === 400 ? error.findings : undefined;
}
