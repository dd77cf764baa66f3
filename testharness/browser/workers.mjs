// The worker a task ran on (workers_test.go starts serve over its tasks): the task list says
// "on worker w1" under the agent of the task that ran there and nothing under the local one's;
// the task's page says it beside its agent.
//
// env: DASH_URL, DASH_TOKEN, DASH_SHOTS

import { assert, link, rowText, run, seeText, shot, watchedPage } from "./lib.mjs";

const base = process.env.DASH_URL;
const shots = process.env.DASH_SHOTS;

await run(async (browser) => {
  const { page, context, check } = await watchedPage(browser, base);
  await page.goto(await link(base, process.env.DASH_TOKEN));
  await seeText(page, "Live", ".conn");

  await seeText(page, "on worker w1", "tbody tr");
  const remote = await rowText(page, "Ran on the worker");
  assert(/general\s+on worker w1/.test(remote), `the remote task's row: ${remote}`);
  const local = await rowText(page, "Ran right here");
  assert(!local.includes("worker"), `the local task's row names a worker: ${local}`);
  await shot(page, shots, "workers-list");

  await page.getByRole("link", { name: "Ran on the worker", exact: true }).click();
  await seeText(page, "on worker w1", "dl.facts");
  const facts = await page.locator("dl.facts").innerText();
  assert(/Agent\s+general on worker w1\s/.test(facts), `the task page's agent: ${facts}`);
  await shot(page, shots, "workers-task");

  await page.goto(base + "/#/task/bg_00000000000000000000l1");
  await seeText(page, "Ran right here", "h1");
  const here = await page.locator("dl.facts").innerText();
  assert(!here.includes("worker"), `the local task's page names a worker: ${here}`);
  check("the worker");
  await context.close();
});
