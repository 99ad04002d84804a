// Debian's chromium for the console's browser tests, driven by
// playwright-core. .ci/run installs the package; nothing is downloaded.
import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext } from 'playwright-core';

const CHROMIUM = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium';

const OPTIONS = {
  executablePath: CHROMIUM,
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
};

function requireChromium(): void {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
}

export function launchChromium(): Promise<Browser> {
  requireChromium();
  return chromium.launch(OPTIONS);
}

/** A browser whose storage lives in `profile`, as a user's does across visits. */
export function launchChromiumProfile(profile: string, viewport: { width: number; height: number }): Promise<BrowserContext> {
  requireChromium();
  return chromium.launchPersistentContext(profile, { ...OPTIONS, viewport });
}
