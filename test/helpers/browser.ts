// A real browser for the dashboard tests: Debian's Chromium (/usr/bin/chromium, installed by
// .ci/run) driven by playwright-core; Playwright's own browser download is never used. A
// missing Chromium fails the test run, naming what to install: a skipped browser suite would
// pass CI with the dashboard untested.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { AxeBuilder } from '@axe-core/playwright';
import { startServer, type TestServer } from './server.js';

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
  // A frame sandboxed without scripts (an email preview) is left out: axe would wait forever for
  // the script it injects there, and what it shows is the sender's email, not the dashboard.
  const r = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).exclude('iframe[sandbox]').analyze();
  return r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** What the page tests ask of a page, waiting for the render that follows a fetch. */
function helpersFor(page: Page) {
  return {
    h1: (name: string) => page.getByRole('heading', { level: 1, name }).waitFor(),
    nav: (name: string) => page.getByRole('navigation', { name: 'Workspace pages' }).getByRole('link', { name }).click(),
    /**
     * How many the locator finds once it has settled on `n` (a page renders its list after its
     * fetch answers, so a count taken at once may see the loading state or the previous list), or
     * however many it finds after 5 s.
     */
    async countOf(locator: Locator, n: number): Promise<number> {
      const until = Date.now() + 5000;
      let found = await locator.count();
      while (found !== n && Date.now() < until) {
        await page.waitForTimeout(50);
        found = await locator.count();
      }
      return found;
    },
    /** Whether the locator is visible within 5 s (isVisible() answers at once, before a fetch's render). */
    visible: (locator: Locator): Promise<boolean> => locator.first().waitFor({ state: 'visible', timeout: 5000 }).then(() => true, () => false),
  };
}

/** The rate limits a dashboard suite's Herald runs under: a browser asks often, from one address. */
const BROWSER_PACE = 'ip-public=100000:100000,edge=100000:100000,user-dashboard=100000:100000';

/**
 * A dashboard suite's set-up: Chromium, a Herald started with `env` (under limits a browser's
 * pace does not reach), one page whose dialogs are accepted, the page helpers, and `scan`: the
 * accessibility scan and screenshot of what the page shows, its place kept in `visited` for
 * the phone-width check. All closed by `t`'s teardown.
 */
export async function dashboardSuite(t: Test, env: Record<string, string> = {}) {
  const browser = await launch(t);
  const s: TestServer = await startServer({ HERALD_RATE_LIMITS: BROWSER_PACE, ...env });
  t.teardown(() => s.stop());
  const { context, page, problems } = await openPage(browser);
  page.on('dialog', (d) => void d.accept());
  t.teardown(() => context.close());
  /** What each page was named for its phone-width check, and where it is. */
  const visited: { name: string; url: string }[] = [];
  const scan = async (t: Test, name: string) => {
    t.same(await checkPage(page, name), [], `${name}: no serious or critical accessibility violations`);
    visited.push({ name, url: page.url() });
  };
  return { browser, s, context, page, problems, visited, scan, ...helpersFor(page) };
}

/**
 * Each page in `visited` again at phone width (390 px), signed in with `token`: the scan, a
 * screenshot (`<name>-phone`), no sideways scrolling and no console errors.
 */
export async function checkAtPhoneWidth(t: Test, browser: Browser, link: string, visited: { name: string; url: string }[]): Promise<void> {
  const phone = await openPage(browser, 390);
  t.teardown(() => phone.context.close());
  await phone.page.goto(link);
  await phone.page.getByRole('heading', { level: 1 }).waitFor();
  for (const { name, url } of visited) {
    await phone.page.goto(url);
    await phone.page.getByRole('heading', { level: 1 }).waitFor();
    await phone.page.waitForLoadState('networkidle');
    t.same(await checkPage(phone.page, `${name}-phone`), [], `${name} at 390 px: no serious or critical violations`);
    t.ok(await phone.page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${name} at 390 px: no sideways scrolling`);
  }
  t.same(phone.problems, [], 'no console errors');
}
