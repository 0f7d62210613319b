// A real browser for the dashboard tests: Debian's Chromium (/usr/bin/chromium, installed by
// .ci/run) driven by playwright-core; Playwright's own browser download is never used. A
// missing Chromium fails the test run, naming what to install: a skipped browser suite would
// pass CI with the dashboard untested.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';

const CHROMIUM = process.env.HERALD_TEST_CHROMIUM ?? '/usr/bin/chromium';
const RESULTS = new URL('../../test-results/', import.meta.url).pathname;

/** Chromium, headless, with the flags this machine's closed network needs; closed by `t`'s teardown. */
export async function launch(t: Test): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`Chromium is missing at ${CHROMIUM}: install Debian's package (apt-get install -y chromium), as .ci/run does, or set HERALD_TEST_CHROMIUM`);
  }
  // Playwright gives the browser a fresh, empty profile (--user-data-dir) of its own.
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
  });
  t.teardown(() => browser.close());
  return browser;
}

/**
 * A fresh context (own sessionStorage) and page at `width`; every console error, page error,
 * CSP violation and failed request is collected in `problems`, which a test asserts empty.
 */
export async function openPage(browser: Browser, width = 1280): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: width > 800 ? 900 : 844 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()} at ${m.location().url}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  return { context, page, problems };
}

/**
 * The accessibility scan (axe-core, WCAG 2 A and AA rules) of what `page` shows: the serious
 * and critical violations, one line each. And a full-page screenshot under test-results/.
 */
export async function checkPage(page: Page, name: string): Promise<string[]> {
  mkdirSync(RESULTS, { recursive: true });
  await page.screenshot({ path: join(RESULTS, `dashboard-${name}.png`), fullPage: true });
  const r = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}
