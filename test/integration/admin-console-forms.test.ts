import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/infra/clock/clock';
import { fundedAccount } from '../support/accounts';
import { startApp, type Harness } from '../support/app';
import { launchChromium, screenshots, signInToConsole } from '../support/browser';

const T0 = new Date('2036-02-10T09:00:00.000Z');
/** Text a person might type, with every character HTML gives a meaning to. */
const HOSTILE = `</textarea><script>window.__typed=1</script>"'&amp;<b>`;

type Shots = Awaited<ReturnType<typeof screenshots>>;
function fits(shots: Shots): void {
  expect(shots.overflow).toEqual({ 1400: 0, 420: 0 });
  expect(shots.unlabelled).toEqual([]);
}

/**
 * A console form refused with a 400 comes back in the browser with what was typed in each field
 * (HTML characters included, shown as text, never run), each finding beside its field, and the
 * keyboard's focus on the first field to correct; corrected, it goes on to its confirmation.
 */
describe('admin console in a browser: a refused form keeps what was typed', () => {
  let h: Harness;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let base: string;
  let admin: string;
  let account: string;
  const clock = new ManualClock(T0);
  const dialogs: string[] = [];

  beforeAll(async () => {
    h = await startApp({ clock });
    admin = await h.key('admin');
    account = await fundedAccount(h, admin, { plan: 'enterprise', credits: '10.000000' });
    base = await h.listen();
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    page = await context.newPage();
    page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await signInToConsole(page, base, admin);
  });
  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await h?.close();
  });

  /** The id of the element with the keyboard's focus. */
  const focused = () =>
    page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id);
  /** Nothing typed ran as a script, and no script element came from it. */
  const nothingRan = async () => {
    expect(await page.evaluate(() => (globalThis as unknown as { __typed?: number }).__typed)).toBeUndefined();
    expect(await page.locator('script').count()).toBe(0);
    expect(dialogs).toEqual([]);
  };
  const findingOf = (id: string) => page.textContent(`#${id}-finding`);
  const submit = async (button: string): Promise<number> => {
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.request().method() !== 'HEAD' && r.url().startsWith(base)),
      page.click(button),
    ]);
    await page.waitForLoadState();
    return res.status();
  };

  it('a grant: every field as typed, the finding beside the expiry, focus there; corrected, it is confirmed and granted once', async () => {
    await page.goto(`${base}/admin/accounts/${account}`);
    await page.click('summary:has-text("Grant credits")');
    await page.fill('#grant-credits', '2.5');
    await page.fill('#grant-reason', HOSTILE);
    await page.fill('#grant-expires', `next week ${HOSTILE}`);
    expect(await submit('button:has-text("Grant…")')).toBe(400);

    expect(await page.inputValue('#grant-credits')).toBe('2.5');
    expect(await page.inputValue('#grant-reason')).toBe(HOSTILE);
    expect(await page.inputValue('#grant-expires')).toBe(`next week ${HOSTILE}`);
    await nothingRan();
    // The finding beside its field, tied to it for a screen reader, and the summary as before.
    expect(await page.getAttribute('#grant-expires', 'aria-invalid')).toBe('true');
    expect(await page.getAttribute('#grant-expires', 'aria-describedby')).toBe('grant-expires-finding');
    expect(await findingOf('grant-expires')).toBeTruthy();
    expect(await page.getAttribute('#grant-reason', 'aria-invalid')).toBeNull();
    expect(await page.textContent('.problem[role=alert]')).toContain('expiresAt');
    expect(await focused()).toBe('grant-expires');
    fits(await screenshots(page, 'form-refused-grant'));

    // Corrected by keyboard where the focus is: on to the confirmation, with what was typed.
    await page.keyboard.press('Control+A');
    await page.keyboard.type('2036-03-01T00:00:00Z');
    await Promise.all([page.waitForSelector('#confirm'), page.keyboard.press('Enter')]);
    const confirmation = (await page.textContent('#confirm p'))!;
    expect(confirmation).toMatch(new RegExp(`^Grant 2\\.50 credits to ${account}, expiring 2036-03-01T00:00:00(\\.000)?Z, because: `));
    expect(confirmation.endsWith(`because: ${HOSTILE}`)).toBe(true);
    await Promise.all([page.waitForURL(/done=/), page.click('#confirm button[type=submit]')]);
    expect(await page.textContent('.flash')).toBe('Granted 2.50 credits.');
    // Granted once, with the reason exactly as typed.
    const rows = await h.ds.query(`SELECT amount::text FROM grants WHERE account_id = $1 AND reason = $2`, [account, HOSTILE]);
    expect(rows).toEqual([{ amount: '2500000' }]);
  });

  it('a plan change: the plan chosen and the overrides typed (HTML in a textarea) come back, with the findings beside them', async () => {
    await page.goto(`${base}/admin/accounts/${account}`);
    await page.click('summary:has-text("Change plan or Enterprise overrides")');
    await page.selectOption('#plan-plan', 'team');
    const overrides = `{"concurrentRuntimes": -1, "note": "${HOSTILE.replace(/"/g, '\\"')}"}`;
    await page.fill('#plan-overrides', overrides);
    expect(await submit('button:has-text("Change plan…")')).toBe(400);
    expect(await page.inputValue('#plan-plan')).toBe('team');
    expect(await page.inputValue('#plan-overrides')).toBe(overrides);
    await nothingRan();
    expect(await page.getAttribute('#plan-overrides', 'aria-invalid')).toBe('true');
    expect(await findingOf('plan-overrides')).toContain('overrides');
    expect(await focused()).toBe('plan-overrides');
    fits(await screenshots(page, 'form-refused-plan'));
  });

  it('a spend limit: the limit, the thresholds and the member come back; the finding is beside the thresholds', async () => {
    await page.goto(`${base}/admin/accounts/${account}`);
    await page.click('summary:has-text("Set or clear a spend limit")');
    await page.fill('#limit-credits', '5');
    await page.fill('#limit-thresholds', '50, 150');
    await page.fill('#limit-user', `u<img src=x onerror="alert(1)">`);
    expect(await submit('button:has-text("Set limit…")')).toBe(400);
    expect(await page.inputValue('#limit-credits')).toBe('5');
    expect(await page.inputValue('#limit-thresholds')).toBe('50, 150');
    expect(await page.inputValue('#limit-user')).toBe(`u<img src=x onerror="alert(1)">`);
    expect(await page.locator('img').count()).toBe(0);
    await nothingRan();
    expect(await page.getAttribute('#limit-thresholds', 'aria-invalid')).toBe('true');
    expect(await findingOf('limit-thresholds')).toContain('thresholds');
    expect(await focused()).toBe('limit-thresholds');
  });

  it('a suspension: the reason typed comes back with its finding', async () => {
    await page.goto(`${base}/admin/accounts/${account}`);
    await page.click('summary:has-text("Suspend the account")');
    const reason = `${HOSTILE}${'x'.repeat(500)}`;
    await page.fill('#suspend-reason', reason);
    expect(await submit('button:has-text("Suspend…")')).toBe(400);
    expect(await page.inputValue('#suspend-reason')).toBe(reason);
    await nothingRan();
    expect(await page.getAttribute('#suspend-reason', 'aria-invalid')).toBe('true');
    expect(await focused()).toBe('suspend-reason');
    expect((await h.ds.query(`SELECT status FROM accounts WHERE id = $1`, [account]))[0].status).toBe('active');
  });

  it("the reports' period and the accounts' search: what was typed stays in the form, the finding beside it", async () => {
    await page.goto(`${base}/admin`);
    await page.fill('#from', `2036-02-01T00:30:00Z${HOSTILE}`);
    expect(await submit('form.filters button[type=submit]')).toBe(400);
    expect(await page.inputValue('#from')).toBe(`2036-02-01T00:30:00Z${HOSTILE}`);
    expect(await page.inputValue('#to')).toMatch(/^2036-03-01T00:00:00/);
    await nothingRan();
    expect(await page.getAttribute('#from', 'aria-invalid')).toBe('true');
    expect(await focused()).toBe('from');
    fits(await screenshots(page, 'form-refused-reports'));
    // Corrected: the reports.
    await page.fill('#from', '2036-02-01T00:00:00Z');
    expect(await submit('form.filters button[type=submit]')).toBe(200);
    expect(await page.isVisible('#chart-credits')).toBe(true);

    await page.goto(`${base}/admin/accounts`);
    await page.fill('#q', HOSTILE);
    await page.check('#f-suspended');
    await page.selectOption('#f-sort', 'balance');
    await page.fill('#to', 'tomorrow');
    expect(await submit('form[role=search] button[type=submit]')).toBe(400);
    expect(await page.inputValue('#q')).toBe(HOSTILE);
    expect(await page.isChecked('#f-suspended')).toBe(true);
    expect(await page.inputValue('#f-sort')).toBe('balance');
    expect(await page.inputValue('#to')).toBe('tomorrow');
    await nothingRan();
    expect(await page.getAttribute('#to', 'aria-invalid')).toBe('true');
    expect(await findingOf('to')).toBeTruthy();
    expect(await focused()).toBe('to');
    fits(await screenshots(page, 'form-refused-accounts'));
  });

  it('the sign-in: a refused key is not sent back (a secret), the reason is tied to the field, which has the focus', async () => {
    const signedOut = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const p = await signedOut.newPage();
    await p.goto(`${base}/admin/login`);
    await p.fill('#key', 'dlb_not_a_key');
    await Promise.all([p.waitForSelector('#key-error'), p.click('button[type=submit]')]);
    expect(await p.inputValue('#key')).toBe('');
    expect(await p.getAttribute('#key', 'aria-describedby')).toBe('key-error');
    expect(
      await p.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id),
    ).toBe('key');
    await signedOut.close();
  });
});
