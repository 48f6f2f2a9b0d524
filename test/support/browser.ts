import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Where the console's screenshots go (gitignored); CI keeps the folder as an artifact. */
export const SCREENSHOTS = resolve(process.env.ADMIN_SCREENSHOTS_DIR ?? 'test-artifacts/admin');

/** The system Chromium, headless. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * Full-page screenshots of the current page at a laptop (1400 px) and a phone (420 px) width,
 * whether anything is wider than the viewport (a page that scrolls sideways), the tables that scroll
 * sideways inside their card at 1400 px, the stacked lists that still do at 420 px, and the form
 * controls without a label. Returns the files.
 */
export async function screenshots(
  page: Page,
  name: string,
): Promise<{
  files: string[];
  overflow: Record<number, number>;
  unlabelled: string[];
  stackedWiderThanCard: string[];
  widerThanCardOnLaptop: string[];
}> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const files: string[] = [];
  const overflow: Record<number, number> = {};
  let stackedWiderThanCard: string[] = [];
  let widerThanCardOnLaptop: string[] = [];
  const before = page.viewportSize();
  for (const width of [1400, 420]) {
    await page.setViewportSize({ width, height: 900 });
    overflow[width] = await page.evaluate(() => {
      const d = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document
        .documentElement;
      return d.scrollWidth - d.clientWidth;
    });
    // On a laptop every table fits its card: none hides columns behind a sideways scroll.
    if (width === 1400) {
      widerThanCardOnLaptop = await page.$$eval('.scroll > table', (tables) =>
        tables.filter((t) => t.parentElement!.scrollWidth > t.parentElement!.clientWidth).map((t) => t.id),
      );
    }
    // On a phone, lists stack each row as labelled lines: none of them may need a sideways scroll.
    if (width === 420) {
      stackedWiderThanCard = await page.$$eval('.scroll > table.stack', (tables) =>
        tables.filter((t) => t.parentElement!.scrollWidth > t.parentElement!.clientWidth).map((t) => t.id),
      );
    }
    const file = join(SCREENSHOTS, `${name}-${width}.png`);
    await page.screenshot({ path: file, fullPage: true });
    files.push(file);
  }
  if (before) await page.setViewportSize(before);
  // Every form control a person can use has a name a screen reader reads: a <label>, aria-label or aria-labelledby.
  const unlabelled = await page.$$eval('input:not([type=hidden]), select, textarea', (els) =>
    els
      .filter(
        (e) =>
          (e as unknown as { labels: unknown[] }).labels.length === 0 &&
          !e.getAttribute('aria-label') &&
          !e.getAttribute('aria-labelledby'),
      )
      .map((e) => e.outerHTML.slice(0, 120)),
  );
  return { files, overflow, unlabelled, stackedWiderThanCard, widerThanCardOnLaptop };
}

/** Signs in to the admin console at `base` with `key`, and waits for the accounts page it opens on. */
export async function signInToConsole(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/admin/login`);
  await page.fill('input[name=key]', key);
  await Promise.all([page.waitForURL(/\/admin\/accounts$/), page.click('button[type=submit]')]);
}
