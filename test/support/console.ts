/**
 * @module
 * The web console under test: a private-broker runtime, the console server
 * beside it, and Debian's chromium driven by playwright-core (never a
 * downloaded browser). Screenshots go to test/artifacts/console/ (gitignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startConsoleServer, type ConsoleServer } from '../../infra/ui/server.ts';
import { memoryLogger } from './log-sink.ts';
import { ok } from './replies.ts';
import { startTestRuntime, type TestRuntime } from './runtime.ts';

export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = fileURLToPath(new URL('../artifacts/console/', import.meta.url));

export type ConsoleUnderTest = {
  server: ConsoleServer;
  browser: Browser;
  page: Page;
  /** Saves a full-page screenshot of `on` (default: the console page) as an artifact. */
  shot(name: string, on?: Page): Promise<void>;
  dispose(): Promise<void>;
};

export async function openConsole(rt: TestRuntime): Promise<ConsoleUnderTest> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` (.ci/run does)`);
  }
  const { logger } = memoryLogger('silent');
  const server = await startConsoleServer({
    websocketUrl: rt.info.websocketUrl!,
    rootAgentId: rt.info.rootAgentId,
    hostId: rt.info.hostId,
    mintCreds: async () => (await rt.auth!.authority.browserCreds()).creds,
    logger,
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM });
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  mkdirSync(ARTIFACTS, { recursive: true });
  return {
    server,
    browser,
    page,
    shot: async (name, on = page) => void (await on.screenshot({ path: `${ARTIFACTS}${name}.png`, fullPage: true })),
    async dispose() {
      await browser.close();
      await server.close();
    },
  };
}

/**
 * The scene of the console e2e tests: a private runtime under `policy` with a `docs/` directory and a
 * sub-agent `helper` (with `task`, when given), and a console page on it, ready.
 */
export async function openConsoleScene(
  policy: unknown,
  task?: string,
): Promise<{ rt: TestRuntime; ui: ConsoleUnderTest }> {
  const rt = await startTestRuntime({ mode: 'private', policy });
  mkdirSync(join(rt.workspace, 'docs'));
  ok(await rt.call('agent.spawn', { label: 'helper', agentId: 'helper', ...(task ? { task } : {}) }));
  const ui = await openConsole(rt);
  await ui.page.goto(ui.server.url);
  await ui.page.waitForSelector('body[data-ready=true]', { timeout: 20_000 });
  return { rt, ui };
}

/**
 * Presses `key` (a keydown on the page's body) in the first frame that draws an ask not on the page now; await
 * the returned function for the ask's request id. Call it before the ask is made. In the page, not by a round
 * trip to the browser: on a loaded machine one can outlast the arming delay (ARM_MS), and a key that late rightly
 * answers, so a test of a key pressed too soon would pass or fail by the machine's load.
 */
export async function pressOnNextAsk(page: Page, key: string): Promise<() => Promise<string>> {
  await page.evaluate((k) => {
    const known = new Set(
      [...document.querySelectorAll<HTMLElement>('[data-request-id]')].map((e) => e.dataset['requestId']),
    );
    const w = window as unknown as { pressedFor?: Promise<string> };
    w.pressedFor = new Promise((resolve) => {
      const frame = () => {
        const fresh = [...document.querySelectorAll<HTMLElement>('[data-request-id]')].find(
          (e) => !known.has(e.dataset['requestId']),
        );
        if (!fresh) return void requestAnimationFrame(frame);
        document.body.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
        resolve(fresh.dataset['requestId']!);
      };
      frame();
    });
  }, key);
  return () => page.evaluate(() => (window as unknown as { pressedFor: Promise<string> }).pressedFor);
}

/**
 * Waits until the page shows no ask. An answered ask leaves the page when its fact arrives, which can be after
 * the call's reply: a test that counts asks starts only when the last test's are gone (CI once counted the last
 * test's ask as the next one's).
 */
export async function noAsksLeft(ui: ConsoleUnderTest): Promise<void> {
  const left = ui.page.locator('article.ask');
  for (const until = Date.now() + 20_000; (await left.count()) > 0; ) {
    if (Date.now() > until) throw new Error(`${await left.count()} asks still on the page 20 s after the test`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
