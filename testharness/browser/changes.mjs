// The Changes card of an isolated task's page against the plugin in a real opencode serve
// (testharness/e2e/dashboard_changes_test.go): once the child has ended, the card shows its
// branch, the file it changed with + and −, and the diff; Merge asks first, then the core merges
// and the card reads "merged" with the core's note. Prints "ready" once the page is live (the Go
// test then launches), "branch <name>" once the card is read (before the merge), and "merged".
//
// env: DASH_URL, DASH_TOKEN, DASH_SHOTS

import { assert, link, run, seeRowStatus, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const shots = process.env.DASH_SHOTS;

await run(async (browser) => {
  const { page, check } = await watchedPage(browser, base);
  await page.goto(await link(base, process.env.DASH_TOKEN));
  await seeText(page, "Live", ".conn");
  console.log("ready");

  await seeRowStatus(page, "Edit A", "completed");
  await page.getByRole("link", { name: "Edit A", exact: true }).click();
  const card = page.locator('section[aria-label="Changes"]');
  await seeText(page, "pending", 'section[aria-label="Changes"] p');
  const id = decodeURIComponent(page.url().split("#/task/")[1] ?? "");
  assert(id.startsWith("bg_"), `the task's page: ${page.url()}`);
  const branch = (await card.locator("p code").first().innerText()).trim();
  assert(branch === `asyncagents/${id}`, `the branch reads "${branch}"`);
  console.log(`branch ${branch}`);
  const files = (await card.locator("ul").innerText()).trim();
  assert(files === "shared.txt +1 −1", `the files read "${files}"`);
  const diff = await card.locator("pre.diff").innerText();
  for (const line of ["--- a/shared.txt", "+++ b/shared.txt", "-line two", "+edited by A", " line one"]) {
    assert(diff.split("\n").includes(line), `the diff has no line "${line}":\n${diff}`);
  }
  await shot(page, shots, "changes-pending");
  await card.screenshot({ path: `${shots}/changes-card-pending.png` });

  await page.getByRole("button", { name: "Merge…" }).click();
  await seeText(page, "Apply “Edit A” to the working tree as uncommitted changes?", 'section[aria-label="Changes"] span');
  await page.getByRole("button", { name: "Keep it as it is" }).waitFor();
  await shot(page, shots, "changes-confirm");
  await card.screenshot({ path: `${shots}/changes-card-confirm.png` });
  await page.getByRole("button", { name: "Yes, merge it" }).click();
  await seeText(page, `Merged task ${id}`, 'section[aria-label="Changes"] p[role="status"]');
  await seeText(page, "merged", 'section[aria-label="Changes"] p .muted');
  const state = (await card.locator("p .muted").first().innerText()).trim();
  assert(state === "merged", `the state reads "${state}"`);
  assert((await page.getByRole("button", { name: "Merge…" }).count()) === 0, "a merged task still offers Merge");
  await shot(page, shots, "changes-merged");
  await card.screenshot({ path: `${shots}/changes-card-merged.png` });
  console.log("merged");
  check("changes");
});
