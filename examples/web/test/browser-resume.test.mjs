// Browser test of a turn whose stream breaks: the page resumes it from its last event
// (GET /engine/turns/{turnId} with Last-Event-ID) and shows the whole answer once. Usage:
//
//	node browser-resume.test.mjs <engine base URL> <screenshot folder> [<replica URL>]
//
// The engine must serve the demo tenant and its web client, and keep its turns. With a
// replica, the resume goes to it instead, as a load balancer may send it after the page's
// network changed (both must share Redis). cmd/engine's TestWebResumeInBrowser and
// TestWebResumeAcrossReplicas run this file and check that the resume called no tool again.

import { chromium } from "playwright-core";
import { mkdtemp, mkdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import assert from "node:assert/strict";

const [base, outDir, replica] = process.argv.slice(2);
if (!base || !outDir) {
  console.error("usage: node browser-resume.test.mjs <engine base URL> <screenshot folder>");
  process.exit(2);
}
const demoURL = new URL("/demo/", base).href;
await mkdir(outDir, { recursive: true });
const profile = await mkdtemp(path.join(tmpdir(), "engine-web-resume-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-sync"],
  viewport: { width: 1100, height: 820 },
  locale: "en-US",
});
context.setDefaultTimeout(20_000);

let failures = 0;
try {
  const page = await context.newPage();
  const traffic = [];
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/engine")) traffic.push(`${r.request().method()} ${u.pathname} ${r.status()}`);
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  await page.addInitScript(() => {
    localStorage.clear();
    localStorage.setItem("engine-demo.locale", "en");
  });
  await page.goto(demoURL);
  await page.waitForFunction(() => {
    const a = [...document.querySelectorAll(".answer")];
    return a.length > 0 && a.every((x) => x.getAttribute("aria-busy") === "false");
  });

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
  await page.screenshot({ path: path.join(outDir, "resumed.png") });
  console.log(`ok   a broken stream is resumed (${traffic.filter((t) => t.startsWith("POST /engine ")).length} turns posted)`);
} catch (err) {
  failures++;
  console.log(`FAIL a broken stream is resumed\n${err?.stack ?? err}`);
  for (const page of context.pages()) {
    console.log("the page's conversation:", await page.locator("#conversation").innerText().catch(() => "?"));
    await page.screenshot({ path: path.join(outDir, "failed-resume.png") }).catch(() => {});
  }
}
await context.close();
await rm(profile, { recursive: true, force: true });
console.log(failures ? "failed" : "1/1 passed");
process.exit(failures ? 1 : 0);
