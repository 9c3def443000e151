// The browser test of a conversation handed to a person, in Debian's Chromium driven by
// playwright-core: two pages, the customer on /demo/ and a person on the agent desk at
// /demo/desk/. Usage:
//
//	node browser-handoff.test.mjs <engine base URL> <screenshot folder> <desk key>
//
// The engine must run the offline demo (cmd/engine with no tenants file), whose tenants hand
// off to the desk; the desk key is the one it prints on its console. cmd/engine's
// TestHandoffInBrowser runs this file against a server it starts. It prints the delay from the
// person's send to their message shown on the customer's page.

import assert from "node:assert/strict";
import path from "node:path";
import { args, launch, lastAnswerDone, shot as saveShot, startsFresh, suite } from "./harness.mjs";

const { base, outDir, demoURL, rest: [deskKey] } = args("browser-handoff.test.mjs", "<desk key>");
if (!deskKey) {
  console.error("the desk key is missing: the engine prints it on its console");
  process.exit(2);
}
const deskURL = new URL("/demo/desk/", base).href;
const browser = await launch(outDir);
const { context } = browser;
const shot = (page, name) => saveShot(outDir, page, name);
const deskShot = (page, name) => page.screenshot({ path: path.join(outDir, `${name}.png`) });

function watch(page) {
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  page.on("console", (m) => m.type() === "error" && errors.push(new Error(m.text())));
  return errors;
}

// Two pages share the browser: the one acted on comes to the front, since a page behind
// another has its animation frames throttled, and the waits poll on them.
async function ask(page, text) {
  await page.bringToFront();
  const n = await page.locator(".answer").count();
  await page.locator("#text").fill(text);
  await page.locator("#text").press("Enter");
  await page.locator(".answer").nth(n).waitFor();
  return lastAnswerDone(page);
}

const { test, run, measured } = suite();

test("a person takes the conversation and gives it back", async () => {
  const customer = await context.newPage();
  const customerErrors = watch(customer);
  await startsFresh(customer, "en", { "engine-demo.live": "0" });
  await customer.goto(demoURL);
  await lastAnswerDone(customer);
  await ask(customer, "my card number is 4111 1111 1111 1111 and it was charged twice");
  const asked = await ask(customer, "I want to talk to a person");
  await asked.locator(".widget.handoff").waitFor();
  assert.match(await asked.locator(".speak").textContent(), /person/i, "the turn says a person is coming");

  const desk = await context.newPage();
  await desk.bringToFront();
  const deskErrors = watch(desk);
  await desk.goto(deskURL);
  await desk.locator("#desk-key").fill(deskKey);
  await desk.locator("#agent-name").fill("Ana");
  await desk.locator("#open-desk").click();
  const waiting = desk.locator(".handoff-item").first();
  await waiting.waitFor();
  const summary = await waiting.locator(".summary").textContent();
  assert.ok(summary.length > 20, `the desk shows a summary: ${summary}`);
  assert.doesNotMatch(summary.replace(/\D/g, ""), /4111111111111111/, "the summary holds no card number");
  await deskShot(desk, "handoff-desk-queue");
  await waiting.locator("button.pick").click();
  await desk.locator("#chat").waitFor();
  assert.doesNotMatch((await desk.locator("#chat-summary").textContent()).replace(/\D/g, ""), /4111111111111111/);

  // The customer is told that a person joined.
  await customer.locator('.widget.handoff[data-status="connected"]').waitFor();
  assert.match(await customer.locator(".widget.handoff .handoff-status").textContent(), /Ana/);

  // The person writes; the message appears on the customer's page without the customer doing anything.
  const hello = "Hello, I am Ana. I can see the double charge.";
  await desk.locator("#reply-text").fill(hello);
  const sent = Date.now();
  await desk.locator("#reply-send").click();
  const shown = customer.locator(".from-person").last();
  await shown.waitFor();
  assert.equal(await shown.locator(".speak").textContent(), hello);
  assert.match(await shown.locator(".person-name").textContent(), /Ana/);
  const delay = Number(await shown.getAttribute("data-shown-at")) - sent;
  measured.push(`person's message, send to shown on the customer's page: ${delay} ms`);

  // The customer answers; it appears on the desk.
  const answer = "It was on Monday, at the supermarket.";
  await customer.locator("#text").fill(answer);
  await customer.locator("#text").press("Enter");
  await desk.locator(".desk-messages .from-user", { hasText: answer }).waitFor();
  await shot(customer, "handoff-customer-with-person");
  await deskShot(desk, "handoff-desk-chat");

  // The person releases with a note; the customer is told, and the assistant answers next.
  await desk.locator("#release-note").fill("Refund of the double charge opened, ref 1234.");
  await desk.locator("#release-send").click();
  await desk.locator("#chat").waitFor({ state: "hidden" });
  await customer.locator('.widget.handoff[data-status="released"]').waitFor();
  await customer.waitForFunction(() => !document.querySelector(".widget.handoff:not([data-status=released]):not([data-status=failed])"));
  const back = await ask(customer, "what is my balance");
  assert.ok(await back.locator(".widget.stat").count(), "the assistant answers the balance with a stat");
  assert.equal(await customer.locator(".from-person").count(), 1, "one message of the person");
  await shot(customer, "handoff-customer-back");
  assert.deepEqual([...customerErrors, ...deskErrors].map(String), [], "no errors on the pages");
  await customer.close();
  await desk.close();
});

test("the desk refuses a wrong key", async () => {
  const desk = await context.newPage();
  await desk.bringToFront();
  await desk.goto(deskURL);
  await desk.locator("#desk-key").fill("desk_not-the-key");
  await desk.locator("#open-desk").click();
  await desk.locator("#login-error").waitFor();
  assert.match(await desk.locator("#login-error").textContent(), /not the desk key/);
  assert.equal(await desk.locator("#queue").isHidden(), true);
  await desk.close();
});

await run(browser, outDir);
