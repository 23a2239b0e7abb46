// Drives code-server in Debian's headless Chromium (see e2e.sh):
//   node e2e.mjs URL SCREENSHOT_DIR BROWSER_PROFILE_DIR SERVER_PATH_SETTING
// Exits non-zero, after a screenshot, at the first check that fails.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';

const [url, shots, profile, original] = process.argv.slice(2);
const WAIT_MS = 90_000;
const timings = [];
let mark = Date.now();

function timed(name) {
  const now = Date.now();
  timings.push(`${name.padEnd(46)} ${((now - mark) / 1000).toFixed(1).padStart(5)}s`);
  mark = now;
}

async function shot(page, name) {
  await page.screenshot({ path: path.join(shots, `${name}.png`) });
}

async function check(page, name, action) {
  try {
    await action();
    timed(name);
    await shot(page, name.replace(/\W+/g, '-'));
    console.log(`ok   ${name}`);
  } catch (error) {
    await shot(page, 'failure').catch(() => undefined);
    console.error(`FAIL ${name}: ${error.message.split('\n')[0]}`);
    throw error;
  }
}

/** Waits until the element's text holds every one of `expected`. */
async function untilText(locator, expected) {
  const deadline = Date.now() + WAIT_MS;
  let text = '';
  while (Date.now() < deadline) {
    text = (await locator.innerText()).replace(/\s+/g, ' ');
    if (expected.every((part) => text.includes(part))) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const missing = expected.filter((part) => !text.includes(part));
  throw new Error(`no ${missing.join(', ')} in: ${text.slice(0, 400)}`);
}

mkdirSync(profile, { recursive: true });
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1400, height: 900 },
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});
let failed = false;
try {
  const page = context.pages()[0] ?? await context.newPage();
  page.setDefaultTimeout(WAIT_MS);

  await check(page, 'workbench loaded', async () => {
    await page.goto(url);
    await page.locator('.monaco-workbench .part.statusbar').waitFor();
  });

  await check(page, 'paper.md open', async () => {
    await page.locator('.monaco-workbench').click({ position: { x: 700, y: 450 } });
    await page.keyboard.press('Control+P');
    await page.locator('.quick-input-widget input').fill('paper.md');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'paper.md' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.monaco-editor .view-line', { hasText: 'vaswani2017attention' }).first().waitFor();
  });

  await check(page, 'server started (status bar)', async () => {
    await page.locator('.statusbar-item', { hasText: /citelsp P0 \d+\s+P1 \d+/ }).first().waitFor();
  });

  await check(page, 'offline: the status bar counts the references not checked', async () => {
    await page.locator('.statusbar-item', { hasText: /\d+ references? not checked/ }).first().waitFor();
  });

  await check(page, 'Problems panel lists the diagnostics', async () => {
    await page.keyboard.press('Control+Shift+M');
    const rows = page.locator('.markers-panel .monaco-list-row');
    await rows.filter({ hasText: 'NO_LOCATOR' }).first().waitFor();
    await rows.filter({ hasText: 'UNREACHABLE' }).first().waitFor();
    await untilText(page.locator('.markers-panel'),
      ['vaswani2017attention', 'devlin2019bert', 'bran2024augmenting', 'smith2023hallucinated']);
  });

  await check(page, 'hover on a citation shows the card', async () => {
    const citation = page.locator('.monaco-editor .view-line span span', { hasText: 'vaswani2017attention' }).first();
    await citation.hover();
    const hover = page.locator('.monaco-hover', { hasText: 'Attention is All you Need' });
    try {
      await hover.first().waitFor({ state: 'visible', timeout: 15_000 });
    } catch {
      await citation.click();
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      await hover.first().waitFor({ state: 'visible' });
    }
  });

  await check(page, 'palette command opens the checklist', async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget input').fill('>citelsp: Show the human-check checklist');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Show the human-check checklist' })
      .first().waitFor();
    await page.keyboard.press('Enter');
    await page.locator('.tabs-container .tab', { hasText: 'checklist.md' }).waitFor();
    const toasts = (await page.locator('.notification-toast').allInnerTexts()).join(' | ');
    if (/already exists|not found/i.test(toasts)) {
      throw new Error(`notification: ${toasts}`);
    }
  });

  const serverPath = page.locator('.settings-editor .setting-item-contents', { hasText: 'Server: Path' })
    .locator('input').first();
  await check(page, 'a broken server path gives one notification', async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget input').fill('>Preferences: Open User Settings');
    await page.locator('.quick-input-list .monaco-list-row', { hasText: /^Preferences: Open User Settings$/ })
      .first().click();
    await page.locator('.settings-editor').waitFor();
    await page.keyboard.type('citelsp.server.path');
    // In code-server the extension host is "remote": machine settings live in that tab.
    await page.locator('.settings-tabs-widget .action-label', { hasText: 'Remote' }).click();
    await serverPath.fill('/nonexistent/citelsp');
    const toast = page.locator('.notification-toast', { hasText: 'did not start the citelsp server' });
    await toast.first().waitFor();
    for (const button of ['Install…', 'Choose interpreter…', 'Show what was tried']) {
      await toast.first().locator('.monaco-button', { hasText: button }).waitFor();
    }
    await page.locator('.statusbar-item', { hasText: 'citelsp' }).filter({ hasNotText: 'P0' })
      .first().waitFor();
    const count = await toast.count();
    if (count !== 1) {
      throw new Error(`${count} notifications`);
    }
  });

  await check(page, 'the output channel lists what was tried', async () => {
    await page.locator('.notification-toast .monaco-button', { hasText: 'Show what was tried' })
      .first().click();
    await untilText(page.locator('.part.panel'),
      ['[discovery] citelsp.server.path: /nonexistent/citelsp:', 'ENOENT']);
  });

  await check(page, 'a fixed server path starts the server again', async () => {
    await serverPath.fill(original);
    await page.locator('.statusbar-item', { hasText: /citelsp P0 \d+\s+P1 \d+/ }).first().waitFor();
  });
} catch {
  failed = true;
} finally {
  await context.close();
}
console.log('browser timings:');
for (const line of timings) {
  console.log(`  ${line}`);
}
process.exit(failed ? 1 : 0);
