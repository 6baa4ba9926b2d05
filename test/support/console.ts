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
