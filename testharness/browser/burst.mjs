// The dashboard while a thousand tasks start, then finish (serve_test.go appends them to the
// history that `asyncagents serve` follows): the counts and the rows follow each burst with no
// reload and no drop of the event stream, and the page never freezes. Prints "ready" once the page is live, "running" once it
// shows the thousand running; the Go test appends the next burst on each.
//
// env: DASH_URL, DASH_TOKEN, DASH_SHOTS, DASH_BURST (how many tasks a burst holds)

import { assert, link, run, seeRowStatus, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const token = process.env.DASH_TOKEN;
const shots = process.env.DASH_SHOTS;
const n = Number(process.env.DASH_BURST);

/** A freeze: the page's thread busy this long at once, so it could not answer a keypress. */
const FREEZE_MS = 1000;

await run(async (browser) => {
  const { page, check } = await watchedPage(browser, base);
  let loads = 0;
  page.on("load", () => loads++);
  await page.goto(await link(base, token));
  await seeText(page, "Live", ".conn");
  await seeRowStatus(page, "survey a module", "completed");
  // Every long task of the page's thread, from now on; first a known one, to see the watch work.
  await page.evaluate(() => {
    window.__longest = 0;
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longest = Math.max(window.__longest, e.duration);
    }).observe({ type: "longtask", buffered: false });
  });
  await page.evaluate(() => setTimeout(() => {
    const t = performance.now();
    while (performance.now() - t < 150) {}
  }, 0));
  await page.waitForFunction(() => window.__longest >= 150, null, { timeout: 5000 });
  await page.evaluate(() => (window.__longest = 0));
  // Every time the connection state leaves "Live" (a burst must not drop the event stream).
  await page.evaluate(() => {
    window.__drops = [];
    new MutationObserver(() => {
      const text = document.querySelector(".conn")?.textContent ?? "(no connection state)";
      if (!text.includes("Live")) window.__drops.push(text);
    }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
  const loadsBefore = loads;
  console.log("ready");

  await seeText(page, String(n), ".count.st-running .n");
  await seeRowStatus(page, `burst job ${n - 1}`, "running");
  await shot(page, shots, "burst-running");
  console.log("running");

  await seeText(page, String(n + 50), ".count.st-completed .n");
  await seeRowStatus(page, `burst job ${n - 1}`, "completed");
  await seeText(page, "0", ".count.st-running .n");
  await shot(page, shots, "burst-completed");

  // The page still answers at once, and was never reloaded.
  await page.getByPlaceholder("Search descriptions").fill(`burst job ${n - 2}`);
  await seeText(page, "1–1 of 1", ".pager");
  const longest = await page.evaluate(() => window.__longest);
  console.log(`longest busy stretch: ${Math.round(longest)} ms`);
  assert(longest < FREEZE_MS, `the page froze for ${Math.round(longest)} ms`);
  assert(loads === loadsBefore, `the page was reloaded (${loads - loadsBefore} times)`);
  const drops = await page.evaluate(() => window.__drops);
  assert(drops.length === 0, `the event stream dropped: ${drops.join(" | ")}`);
  check("burst");
});
