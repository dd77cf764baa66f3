// The dashboard against the plugin in a real opencode serve (testharness/e2e/permission_test.go):
// a task whose child waits for permission shows the request and the three answers on its page;
// clicking "Allow once" (which names the request: the API refuses an answer without it) lets the
// child run the command, the request card goes, and the task's Result section holds the output.
// Prints "ready" once the page is live; the Go test then launches.
//
// env: DASH_URL, DASH_TOKEN, DASH_SHOTS

import { BOUND, link, run, seeRowStatus, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const token = process.env.DASH_TOKEN;
const shots = process.env.DASH_SHOTS;

await run(async (browser) => {
  const { page, check } = await watchedPage(browser, base);
  await page.goto(await link(base, token));
  await seeText(page, "Live", ".conn");
  console.log("ready");

  await seeRowStatus(page, "Asks first", "waiting");
  await page.getByRole("link", { name: "Asks first", exact: true }).click();
  await seeText(page, "Waiting for permission", ".permission h2");
  await seeText(page, "bash echo permitted-dashboard", ".permission code");
  for (const name of ["Allow once", "Always", "Reject"]) await page.getByRole("button", { name }).waitFor();
  await shot(page, shots, "permission-waiting");
  await page.getByRole("button", { name: "Allow once" }).click();
  await seeText(page, "completed", ".task-head .status");
  // The Result section, not the request card (whose text names the command too).
  await seeText(page, "ran: permitted-dashboard", 'section.card:has(> h2:text-is("Result"))');
  await page.locator(".permission").waitFor({ state: "detached", timeout: BOUND });
  await shot(page, shots, "permission-answered");
  check("permission");
});
