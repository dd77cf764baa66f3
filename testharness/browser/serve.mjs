// The dashboard against `asyncagents serve` over a stored history (serve_test.go starts it):
// what a user sees with the link and without it.
//
// env: DASH_URL (the server), DASH_TOKEN, DASH_SHOTS (where screenshots go)

import { assert, link, run, seeRowStatus, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const token = process.env.DASH_TOKEN;
const shots = process.env.DASH_SHOTS;

await run(async (browser) => {
  // Without a link: how to open it, and no task data.
  {
    const { page, context, check } = await watchedPage(browser, base);
    await page.goto(base + "/");
    await seeText(page, "asyncagents dashboard");
    const body = await page.locator("body").innerText();
    assert(!body.includes("Survey the auth module"), "a task's description shows without the token");
    assert(!body.includes("bg_"), "a task ID shows without the token");
    await shot(page, shots, "no-token");
    // The refused API read is the one console error expected here.
    check("without the token", (e) => e.includes("401"));
    await context.close();
  }

  for (const scheme of ["light", "dark"]) {
    const { page, context, check } = await watchedPage(browser, base, { colorScheme: scheme });
    await page.goto(await link(base, token));
    await seeText(page, "Live", ".conn");
    assert(page.url() === base + "/", `the code stays in the address bar: ${page.url()}`);
    assert((await context.cookies()).length === 0, "the server set a cookie");

    // Finished tasks listed as completed, failed and cancelled; the overview counts them.
    await seeRowStatus(page, "Survey the auth module", "completed");
    await seeRowStatus(page, "Break the build", "failed");
    await seeRowStatus(page, "Write the docs", "cancelled");
    await seeText(page, "1-50 of 1205".replace("-", "–"), ".pager");
    await seeText(page, "done", ".batches");

    // Search through the API's filter, then the status filter.
    await page.getByPlaceholder("Search descriptions").fill("auth module");
    await seeText(page, "1–1 of 1", ".pager");
    await page.getByPlaceholder("Search descriptions").fill("");
    await seeText(page, "of 1205", ".pager");
    await page.getByLabel("Status").selectOption({ label: "Failed" });
    await seeText(page, "1–1 of 1", ".pager");
    await page.getByLabel("Status").selectOption({ label: "Queued" });
    await seeText(page, "1–1 of 1", ".pager");
    await seeRowStatus(page, "Wait for a slot", "queued");
    await page.getByLabel("Status").selectOption({ label: "Running" });
    await seeText(page, "No task matches.", ".tasks");
    await page.getByLabel("Status").selectOption({ label: "All statuses" });
    await seeText(page, "of 1205", ".pager");
    // Sorted by cost, across every task: the costliest is an old one, far past the first page.
    await page.getByRole("button", { name: "Cost" }).click();
    await seeText(page, "Old costly audit", "tbody tr:first-child");
    await seeText(page, "Survey the auth module", "tbody tr:nth-child(2)");
    await page.getByRole("button", { name: "Started" }).click();
    await seeText(page, "Wait for a slot", "tbody tr:first-child");
    // Paging: the next 50 of the 1,200 older tasks.
    await page.getByRole("button", { name: "Older" }).click();
    await seeText(page, "51–100 of 1205", ".pager");
    await page.getByRole("button", { name: "Newer" }).click();
    await seeText(page, "1–50 of 1205", ".pager");
    await shot(page, shots, `overview-${scheme}`);

    // A task's page, opened from the keyboard: its result as Markdown, and nothing of the
    // result's HTML as markup.
    await page.getByRole("link", { name: "Survey the auth module", exact: true }).focus();
    await page.keyboard.press("Enter");
    await seeText(page, "Findings", ".md h4");
    await seeText(page, "<img src=x onerror=alert(1)>", ".md");
    assert((await page.locator(".md img, .md script").count()) === 0, "the result's HTML became markup");
    assert((await page.locator('.md a[href^="javascript"]').count()) === 0, "a javascript: link was kept");
    await seeText(page, "session.go", ".md code");
    await seeText(page, "Look for the auth code", ".prompt");
    await seeText(page, "answered", ".timeline");
    // Its conversation, as the history keeps it (no OpenCode behind serve): the prompt, then the
    // result.
    await seeText(page, "From the task history", "section");
    await seeText(page, "Look for the auth code", ".log .msg-prompt");
    await seeText(page, "Findings", ".log .msg-reply");
    assert((await page.getByRole("button", { name: /Cancel task/ }).count()) === 0, "a read-only server offers a cancel");
    await shot(page, shots, `task-${scheme}`);
    check(`the dashboard (${scheme})`);
    await context.close();
  }

  // Narrow: still readable.
  {
    const { page, context, check } = await watchedPage(browser, base, { viewport: { width: 390, height: 800 } });
    await page.goto(await link(base, token));
    await seeRowStatus(page, "Survey the auth module", "completed");
    await shot(page, shots, "narrow-light");
    check("narrow");
    await context.close();
  }
});
