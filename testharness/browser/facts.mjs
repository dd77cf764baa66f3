// The dashboard's facts (facts_test.go starts serve over its tasks): a cancel is no model
// failure and shows no fallback card for one model; a fallback's attempts carry their real ends;
// the batch link is named; the conversation says what this server reads; a retry shows.
//
// env: DASH_URL, DASH_TOKEN, DASH_SHOTS

import { assert, link, run, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const shots = process.env.DASH_SHOTS;

await run(async (browser) => {
  const { page, context, check } = await watchedPage(browser, base);
  await page.goto(await link(base, process.env.DASH_TOKEN));
  await seeText(page, "Live", ".conn");

  // The retry, in the table.
  await seeText(page, "retrying (attempt 3): HTTP 500: upstream exploded", "tbody tr");
  await shot(page, shots, "facts-overview");

  // The cancelled one-model task: no fallback card, nothing "failed".
  await page.getByRole("link", { name: "Cancelled by the user", exact: true }).click();
  await seeText(page, "cancelled from the dashboard", "section");
  await seeText(page, "this server reads the history, not OpenCode's sessions", "section");
  let body = await page.locator("article.task").innerText();
  assert(!body.includes("Model fallback"), "a fallback card for one model that did not fail");
  assert(!/failed/i.test(body), `a cancel reads as a failure: ${body}`);
  assert(!body.includes("OpenCode is not running"), "serve claims OpenCode is not running");
  // The batch link is named by the core (the parent's title), not the message ID.
  const batch = page.locator(".lineage a[href^='#/batch/']");
  await batch.waitFor();
  await seeText(page, "Fix the login", ".lineage");
  assert(!(await batch.innerText()).includes("msg_7"), `the batch link reads ${await batch.innerText()}`);
  await shot(page, shots, "facts-cancelled");

  // The fallback: A failed, B answered a minute later, each with its own span.
  await page.goto(base + "/#/task/bg_00000000000000000000f2");
  await seeText(page, "Model fallback", "section");
  const timeline = page.locator(".timeline");
  await seeText(page, "failed (rate_limit)", ".timeline");
  await seeText(page, "answered", ".timeline");
  const text = await timeline.innerText();
  // The spans and the task's duration as the core writes them (core/text), the page none.
  assert(text.includes("(2.0s)"), `A's span: ${text}`);
  assert(text.includes("(59s)"), `B answered 59 s after it began, not at its start: ${text}`);
  const facts = await page.locator("dl.facts").innerText();
  assert(/Duration\s+1m 1s\s/.test(facts), `the task's duration: ${facts}`);
  await shot(page, shots, "facts-fallback");

  // The running task's page says it retries.
  await page.goto(base + "/#/task/bg_00000000000000000000f3");
  await seeText(page, "retrying (attempt 3): HTTP 500: upstream exploded", "p.retry");
  await shot(page, shots, "facts-retrying");
  check("the facts");
  await context.close();
});
