// Browser test of a turn whose stream breaks: the page resumes it from its last event
// (GET /engine/turns/{turnId} with Last-Event-ID) and shows the whole answer once. Usage:
//
//	node browser-resume.test.mjs <engine base URL> <screenshot folder> [<replica URL>]
//
// The engine must serve the demo tenant and its web client, and keep its turns. With a
// replica, the resume goes to it instead, as a load balancer may send it after the page's
// network changed (both must share Redis). cmd/engine's TestWebResumeInBrowser and
// TestWebResumeAcrossReplicas run this file and check that the resume called no tool again.

import assert from "node:assert/strict";
import { args, launch, lastAnswerDone, shot, startsFresh, suite } from "./harness.mjs";

const { outDir, demoURL, rest: [replica] } = args("browser-resume.test.mjs", "[<replica URL>]");
const browser = await launch(outDir);
const { context } = browser;
const { test, run } = suite();

test("a broken stream is resumed", async () => {
  const page = await context.newPage();
  const traffic = [];
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/engine")) traffic.push(`${r.request().method()} ${u.pathname} ${r.status()}`);
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  await startsFresh(page);
  await page.goto(demoURL);
  await lastAnswerDone(page);

  // The next turn's stream breaks after its first speak event, as a phone's does when it moves
  // from Wi-Fi to cellular: the engine's whole answer is fetched, and only its start reaches
  // the page.
  let cut = "";
  await page.route("**/engine", async (route) => {
    if (route.request().method() !== "POST" || cut) return route.continue();
    const resp = await route.fetch();
    const body = await resp.text();
    const i = body.indexOf("event: speak\n");
    const end = body.indexOf("\n\n", i) + 2;
    cut = body.slice(0, end);
    await route.fulfill({ status: 200, headers: resp.headers(), body: cut });
  });
  if (replica) {
    // The resume reaches the other replica; the page does not know.
    await page.route("**/engine/turns/**", async (route) => {
      const u = new URL(route.request().url());
      const resp = await route.fetch({ url: new URL(u.pathname + u.search, replica).href });
      await route.fulfill({ response: resp });
    });
  }
  const n = await page.locator(".answer").count();
  await page.locator("#text").fill("what is my balance");
  await page.locator("#text").press("Enter");
  const answer = page.locator(".answer").nth(n);
  await answer.waitFor();
  await page.waitForFunction((i) => document.querySelectorAll(".answer")[i]?.getAttribute("aria-busy") === "false", n);

  assert.ok(cut.includes("event: speak") && !cut.includes("event: done"), "the stream was cut before done");
  assert.equal(await answer.locator(".speak").textContent(), "Your Everyday Checking balance is $1,234.56.", "the whole answer, once");
  assert.equal(await answer.locator(".widget.stat").count(), 1, "the stat widget that came after the cut");
  const resumes = traffic.filter((t) => t.startsWith("GET /engine/turns/"));
  assert.deepEqual(resumes.map((t) => t.replace(/turns\/[0-9a-f-]+/, "turns/…")), ["GET /engine/turns/… 200"], "one resume");
  assert.deepEqual(errors, []);
  await shot(outDir, page, "resumed");
  // cmd/engine's test compares this with the turns in the engine's log.
  console.log(`the page's turns: (${traffic.filter((t) => t.startsWith("POST /engine ")).length} turns posted)`);
  await page.close();
});

await run(browser, outDir, {
  onFailure: async (page) => console.log("the page's conversation:", await page.locator("#conversation").innerText()),
});
