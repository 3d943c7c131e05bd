/**
 * Debian's Chromium driven by playwright-core, headless, with the flags a
 * root run needs on these machines (ENVIRONMENT.md): no sandbox, no GPU, and
 * no background traffic to the outside, which is refused here many
 * connections at a time. Playwright gives every launch a fresh temporary
 * profile (--user-data-dir) and removes it on close.
 */
import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';

/** Where Debian's package installs it; CHROMIUM_PATH overrides. test/ui/install-chromium.sh installs it. */
const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const HEADLESS_ROOT_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Git-ignored: screenshots of every step, kept after the run as the test's artifacts. */
const ARTIFACTS_DIR = path.resolve(import.meta.dirname, '../../test-artifacts/ui');

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: HEADLESS_ROOT_FLAGS });
}

/** Saves a full-page screenshot as `<test>/<NN>-<step>.png` and returns its path. */
export function screenshotter(testName: string) {
  const dir = path.join(ARTIFACTS_DIR, testName);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  let step = 0;
  return async (page: Page, name: string): Promise<string> => {
    step += 1;
    const file = path.join(dir, `${String(step).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    return file;
  };
}
