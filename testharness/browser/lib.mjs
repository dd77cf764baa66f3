// What the dashboard's browser tests share: a headless Chromium (the build @sparticuz/chromium
// ships, driven by playwright-core), a watch on every request and console message of a page,
// bounded waits on what a user reads, and screenshots. The scripts are run by Go tests
// (serve_test.go here, testharness/e2e/dashboard_test.go), which start the servers.

import chromium from "@sparticuz/chromium";
import { chromium as playwright } from "playwright-core";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

/** Every wait on the page is bounded by this (ms). */
export const BOUND = 20_000;

/**
 * Flags of @sparticuz/chromium's set (made for serverless functions) that are left out: the page
 * is tested as a user's browser runs it, with its same-origin policy and mixed-content blocking
 * on, and a context can be closed without taking the one process down with it.
 */
const LEFT_OUT = new Set(["--single-process", "--disable-web-security", "--allow-running-insecure-content"]);

export async function launch() {
  const args = [
    ...chromium.args.filter((a) => !LEFT_OUT.has(a)),
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
  ];
  return playwright.launch({ executablePath: await chromium.executablePath(), args, headless: true });
}

/**
 * A page of a fresh context (no cookie), watched: requests to any other origin than base's and
 * console errors are collected, for check() to fail on.
 */
export async function watchedPage(browser, base, options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 }, ...options });
  const page = await context.newPage();
  const origin = new URL(base).origin;
  const foreign = [];
  const errors = [];
  page.on("request", (r) => {
    const u = r.url();
    if (!u.startsWith("data:") && new URL(u).origin !== origin) foreign.push(u);
  });
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(String(e)));
  return {
    page,
    context,
    /** Fails when the page asked another origin for anything, or logged an error. */
    check(what, allowErrors = () => false) {
      assert(foreign.length === 0, `${what}: requests to other origins: ${foreign.join(", ")}`);
      const real = errors.filter((e) => !allowErrors(e));
      assert(real.length === 0, `${what}: console errors: ${real.join(" | ")}`);
    },
  };
}

/**
 * A link that opens the dashboard once, as `asyncagents dashboard` makes it: a one-time code asked
 * of the server with its token. Without a token (ASYNCAGENTS_API_AUTH=none) the page's address.
 */
export async function link(base, token) {
  if (!token) return base + "/";
  const res = await fetch(base + "/v1/dashboard/code", { method: "POST", headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(BOUND) });
  const body = await res.text();
  assert(res.ok, `no dashboard code: ${res.status} ${body}`);
  return `${base}/?code=${JSON.parse(body).code}`;
}

export function assert(cond, message) {
  if (!cond) throw new Error(message);
}

/** Waits until the page shows text (in an element matching selector, default anywhere). */
export async function seeText(page, text, selector = "body") {
  await page.locator(selector, { hasText: text }).first().waitFor({ state: "visible", timeout: BOUND });
}

/** The text of the table row whose description is desc. */
export async function rowText(page, desc) {
  const row = page.locator("tbody tr", { hasText: desc }).first();
  await row.waitFor({ timeout: BOUND });
  return row.innerText();
}

/** Waits until the row of desc reads status (running, queued, completed, failed, cancelled). */
export async function seeRowStatus(page, desc, status) {
  const deadline = Date.now() + BOUND;
  let last = "";
  while (Date.now() < deadline) {
    const row = page.locator("tbody tr", { hasText: desc }).first();
    if ((await row.count()) > 0) {
      last = await row.locator(".col-status").innerText();
      if (last.trim() === status) return;
    }
    await page.waitForTimeout(100);
  }
  throw new Error(`the row "${desc}" did not read ${status} within ${BOUND} ms (last: "${last}")`);
}

export async function shot(page, dir, name) {
  mkdirSync(dir, { recursive: true });
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: false });
}

/** Runs main, reports a failure on stderr and in the exit code, and always closes the browser. */
export async function run(main) {
  const browser = await launch();
  try {
    await main(browser);
    console.log("ok");
  } catch (err) {
    console.error(err?.stack ?? String(err));
    process.exitCode = 1;
  } finally {
    await browser.close();
  }
}
