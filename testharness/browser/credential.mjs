// The dashboard's credential stays with its server (credential_test.go starts `asyncagents serve`,
// prints a link with `asyncagents dashboard --print`, and runs another local server):
// - the printed link opens the dashboard, which keeps its credential for this origin and tab
//   only (no cookie), and stays open across a reload;
// - the same browser then visits the other server, in the same tab and in a new one: that
//   server's page reports what it can see (cookies, storage, what it can read of the API), and
//   the Go test replays everything the other server got against the API;
// - the link again, in a new tab: refused, a code is good once.
//
// env: DASH_URL, DASH_LINK (the printed link), DASH_OTHER (the other server), DASH_SHOTS

import { assert, BOUND, run, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const printed = process.env.DASH_LINK;
const other = process.env.DASH_OTHER;
const shots = process.env.DASH_SHOTS;

await run(async (browser) => {
  const { page, context, check } = await watchedPage(browser, base);
  await page.goto(printed);
  await seeText(page, "Live", ".conn");
  await seeText(page, "Survey the auth module", "tbody");
  assert(page.url() === base + "/", `the code stays in the address bar: ${page.url()}`);
  assert((await context.cookies()).length === 0, `the server set a cookie: ${JSON.stringify(await context.cookies())}`);
  const kept = await page.evaluate(() => Object.keys(sessionStorage));
  assert(kept.length === 1, `sessionStorage holds ${JSON.stringify(kept)}`);
  await shot(page, shots, "credential-opened");
  // A reload keeps the tab's credential; the stream comes back.
  await page.reload();
  await seeText(page, "Live", ".conn");
  await seeText(page, "Survey the auth module", "tbody");
  check("the dashboard");

  // The other server, next, in the same tab, then in a new tab of the same browser.
  await page.goto(other + "/");
  await seeText(page, "reported");
  await shot(page, shots, "credential-other-server");
  const tab = await context.newPage();
  await tab.goto(other + "/");
  await seeText(tab, "reported");
  await tab.close();

  // The printed link once more, in a new tab (no credential of its own): refused.
  const again = await context.newPage();
  await again.goto(printed);
  await seeText(again, "used already or has expired", ".gate");
  const body = await again.locator("body").innerText();
  assert(!body.includes("Survey the auth module"), "a task shows after the link's second use");
  assert(again.url() === base + "/", `the code stays in the address bar: ${again.url()}`);
  await shot(again, shots, "credential-link-used");
  await again.waitForTimeout(Math.min(200, BOUND));
  console.log("done");
});
