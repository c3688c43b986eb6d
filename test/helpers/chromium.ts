import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`), or CHROMIUM_PATH. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Why browser tests cannot run here, or undefined when they can. CI never skips: .ci/run installs
 * Chromium, and a missing one there fails the launch instead.
 */
export const noChromium =
  existsSync(CHROMIUM_PATH) || process.env.CI
    ? undefined
    : `no Chromium at ${CHROMIUM_PATH} (apt-get install chromium, or set CHROMIUM_PATH)`;

/** Headless Chromium, launched as ENVIRONMENT notes say it runs on these machines (launch() gives it a fresh profile). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
