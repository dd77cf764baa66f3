// The dashboard against the plugin in a real opencode serve (testharness/e2e/dashboard_test.go):
// tasks launched while the page is open appear and change without a reload, and a task is
// cancelled from its page; a task's page shows the child's conversation. Prints "ready" once the
// page is live; the Go test then launches.
//
// env: DASH_URL, DASH_TOKEN, DASH_SHOTS

import { assert, link, BOUND, run, seeRowStatus, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const token = process.env.DASH_TOKEN;
const shots = process.env.DASH_SHOTS;

await run(async (browser) => {
  const { page, check } = await watchedPage(browser, base);
  let loads = 0;
  page.on("load", () => loads++);
  await page.goto(await link(base, token));
  await seeText(page, "Live", ".conn");
  assert(page.url() === base + "/", `the code stays in the address bar: ${page.url()}`);
  const loadsBefore = loads;
  console.log("ready");

  // Launched now: the rows come in, running, and one completes.
  await seeRowStatus(page, "Live job", "running");
  await seeRowStatus(page, "Long job", "running");
  await shot(page, shots, "live-running");
  await seeRowStatus(page, "Live job", "completed");
  // Its tokens, summed from its child's messages, are in its row.
  const tokens = (await page.locator("tbody tr", { hasText: "Live job" }).first().locator(".col-tokens").innerText()).trim();
  assert(/^[0-9.]+[kM]?$/.test(tokens), `the tokens of "Live job" read "${tokens}"`);

  // A finished task's page: the child's conversation as OpenCode keeps it, read through the
  // status API: its prompt, its tool call with the tool's output, and its reply.
  await page.getByRole("link", { name: "Live job", exact: true }).click();
  await seeText(page, "Live job", "h1");
  await seeText(page, "CHILD live", ".log .msg-prompt");
  await seeText(page, "bash", ".log .tool summary");
  await page.locator(".log .tool summary", { hasText: "bash" }).first().click();
  await seeText(page, "echo dashboard-probe", ".log .tool pre.in");
  const output = (await page.locator(".log .tool pre.out").first().innerText()).trim();
  assert(output === "dashboard-probe", `the tool's output reads "${output}"`);
  await seeText(page, "live answer", ".log .msg-reply");
  await page.locator('section[aria-label="Conversation"]').screenshot({ path: `${shots}/task-conversation.png` });
  await page.getByRole("link", { name: "← All tasks" }).click();

  // Cancel from the task's page, whose conversation is live while it runs.
  await page.getByRole("link", { name: "Long job", exact: true }).click();
  await seeText(page, "Long job", "h1");
  await seeText(page, "(live)", "section h2");
  await seeText(page, "CHILD long", ".log .msg-prompt");
  await page.getByRole("button", { name: "Cancel task…" }).click();
  await page.getByRole("button", { name: "Yes, cancel it" }).click();
  await seeText(page, "cancelled", ".task-head .status");
  await seeText(page, "cancelled from the dashboard", "section");
  await page.getByRole("link", { name: "← All tasks" }).click();
  await seeRowStatus(page, "Long job", "cancelled");

  // The batch, named by its parent session's title and its tasks (not its message's ID), and its
  // page's timeline: one bar per task, each ending where its task ended.
  await page.getByRole("link", { name: "parent: Live job, Long job" }).click();
  await seeText(page, "parent: Live job, Long job", "h1");
  await page.locator(".bars .bar-row").nth(1).waitFor({ timeout: BOUND });
  const bars = await page.locator(".bars .bar-row").count();
  assert(bars === 2, `the timeline has ${bars} bars`);
  await seeText(page, "Long job", ".bars .bar-label");
  await shot(page, shots, "batch-timeline");
  await page.getByRole("link", { name: "← All tasks" }).click();
  assert(loads === loadsBefore, `the page was reloaded (${loads - loadsBefore} times)`);
  await page.waitForTimeout(Math.min(500, BOUND));
  check("live");
});
