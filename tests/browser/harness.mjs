// What the browser tests share (dashboard.mjs, panels.mjs): Debian's chromium, headless, through
// puppeteer-core; pages that record everything a view must not do (console errors and warnings —
// CSP violations are console errors —, uncaught exceptions, dialogs such as an alert from injected
// markup, failed requests); checks that print "PASS what" or "FAIL what: why" and screenshot the
// view into OUT on failure (RS_SCREENSHOTS=DIR: of every check, for docs/).
import puppeteer from 'puppeteer-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export async function startHarness(base, out) {
    const shotsDir = process.env.RS_SCREENSHOTS || '';
    mkdirSync(out, { recursive: true });
    const browser = await puppeteer.launch({
        executablePath: process.env.RS_CHROMIUM || '/usr/bin/chromium',
        headless: true,
        // --no-sandbox: the test may run as root (CI containers), where chromium's sandbox refuses
        args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run'],
    });
    let failures = 0;

    async function newPage() {
        const page = await browser.newPage();
        await page.setViewport({ width: 1300, height: 1000 });
        page.problems = [];
        page.on('console', (m) => {
            if (m.type() === 'error' || m.type() === 'warn') page.problems.push(`console ${m.type()}: ${m.text()}`);
        });
        page.on('pageerror', (e) => page.problems.push(`exception: ${e.message}`));
        page.on('dialog', async (d) => { page.problems.push(`dialog: ${d.message()}`); await d.dismiss(); });
        // (requests still in flight when the test navigates away are aborted: not a failure)
        page.on('requestfailed', (r) => {
            if (r.failure()?.errorText !== 'net::ERR_ABORTED') page.problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`);
        });
        return page;
    }

    async function check(name, page, fn) {
        const file = name.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');
        try {
            await fn();
            if (page.problems.length) throw new Error(page.problems.join('; '));
            console.log(`PASS ${name}`);
            if (shotsDir) await page.screenshot({ path: join(shotsDir, `${file}.png`) });
        } catch (e) {
            failures++;
            console.log(`FAIL ${name}: ${String(e.message || e).replace(/\s+/g, ' ').slice(0, 800)}`);
            await page.screenshot({ path: join(out, `${file}.png`), fullPage: true }).catch(() => {});
        }
        page.problems = [];
    }

    return {
        browser,
        newPage,
        check,
        open: (page, hash) => page.goto(`${base}/?poll_ms=500${hash}`, { waitUntil: 'load' }),
        text: (page, sel) => page.$eval(sel, (e) => e.innerText),
        until: (page, fn, ...args) => page.waitForFunction(fn, { timeout: 15000, polling: 100 }, ...args),
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
        assert: (cond, what) => { if (!cond) throw new Error(what); },
        // closes the browser and exits: 1 when a check failed
        finish: async () => { await browser.close(); process.exit(failures ? 1 : 0); },
    };
}
