/**
 * The docs page in a real browser: Debian's chromium, driven by playwright-core, opens /docs on the
 * local API and must show the three operations and getPet's deprecation. Skipped (saying why) only
 * where no chromium is installed; CI installs it (.ci/run).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalApi } from '../../local/server.ts';
import { startTestApi } from '../support/localApi.ts';
import { fetchApi } from '../support/http.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
/** Without chromium the test is skipped, and its title, which the suite's summary prints, says how to install it. */
const BROWSER_TEST = hasChromium
  ? `renders /docs in Chromium (${CHROMIUM}) with the three operations and the deprecation`
  : `renders /docs in Chromium: no chromium at ${CHROMIUM}; install it: sudo apt-get install -y --no-install-recommends chromium (or set CHROMIUM_PATH)`;
/** Git-ignored: the screenshot of the last run, to look at. */
const SCREENSHOT = join('test-output', 'docs.png');

let api: LocalApi;
let origin: string;
beforeAll(async () => {
  api = await startTestApi('docs-test-key');
  origin = new URL(api.url).origin;
});
afterAll(async () => {
  await api?.close();
});

describe('documentation on the local API', () => {
  it('serves /openapi.json with the local server first', async () => {
    const res = await fetch(`${origin}/openapi.json`);
    expect(res.headers.get('content-type')).toBe('application/json');
    const document = (await res.json()) as { openapi: string; servers: { url: string }[] };
    expect(document.openapi).toMatch(/^3\.1\./);
    expect(document.servers[0]?.url).toBe(api.url);
  });

  it('answers other paths near the docs with the JSON 404', async () => {
    expect((await fetchApi(`${origin}/docs/../../package.json`)).status).toBe(404);
    expect((await fetchApi(`${origin}/docs/index.js`)).status).toBe(404);
  });

  it.skipIf(!hasChromium)(BROWSER_TEST, async () => {
    const profile = mkdtempSync(join(tmpdir(), 'petstore-chromium-'));
    let context: BrowserContext | undefined;
    try {
      context = await chromium.launchPersistentContext(profile, {
        executablePath: CHROMIUM,
        headless: true,
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
        ],
        viewport: { width: 1280, height: 1400 },
      });
      const page = await context.newPage();
      const offsite: string[] = [];
      page.on('request', (request) => {
        if (!request.url().startsWith(origin)) offsite.push(request.url());
      });
      await page.goto(`${origin}/docs`, { timeout: 30_000 });
      await page.locator('.opblock').nth(2).waitFor({ timeout: 30_000 });
      for (const operationId of ['listPets', 'createPet', 'getPet']) {
        await expect(page.locator('.opblock', { hasText: operationId }).count()).resolves.toBe(1);
      }
      const deprecated = page.locator('.opblock-deprecated');
      await expect(deprecated.count()).resolves.toBe(1);
      await expect(deprecated.textContent()).resolves.toContain('/pets/{petId}');
      await expect(page.locator('.info .title').textContent()).resolves.toContain('Pet Store Inventory');
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
      expect(offsite).toEqual([]);
    } finally {
      await context?.close();
      rmSync(profile, { recursive: true, force: true });
    }
  });
});
