// Regenerates the README's screenshots of the reference web client (docs/img), in Debian's
// Chromium driven by playwright-core. Start the offline demo (go run ./cmd/engine), then:
//
//	npm run screenshot [-- <engine base URL> [<folder>]]
//
// The base URL defaults to http://127.0.0.1:8080 and the folder to the repository's docs/img.
// CHROMIUM names the browser (default /usr/bin/chromium).

import { fileURLToPath } from "node:url";
import { tmpdir } from "node:os";
import { launch, lastAnswerDone, shot, startsFresh } from "./harness.mjs";

const base = process.argv[2] || "http://127.0.0.1:8080";
const outDir = process.argv[3] || fileURLToPath(new URL("../../../docs/img/", import.meta.url));
const demoURL = new URL("/demo/", base).href;

const browser = await launch(tmpdir());
const { context } = browser;

/** open opens the page at viewport in locale and waits for the home turn. */
async function open(viewport, locale) {
  const page = await context.newPage();
  await page.setViewportSize(viewport);
  // No animation: a card is drawn whole, not halfway through its entrance.
  await page.emulateMedia({ reducedMotion: "reduce" });
  await startsFresh(page, locale);
  await page.goto(demoURL);
  await lastAnswerDone(page);
  return page;
}

/** ask sends text and waits for its answer. */
async function ask(page, text) {
  await page.locator("#text").fill(text);
  await page.locator("#text").press("Enter");
  return lastAnswerDone(page);
}

try {
  // An Arabic turn on a phone-sized screen, before the transfer changes the balance.
  const ar = await open({ width: 420, height: 860 }, "ar");
  await ask(ar, "ما هو رصيدي");
  await shot(outDir, ar, "web-client-arabic");
  await ar.close();

  // A transfer confirmed with a passcode, at 1280 px, where the header is one row.
  const page = await open({ width: 1280, height: 820 }, "en");
  const answer = await ask(page, "send 20 dollars to Alex");
  await answer.locator(".widget.confirm").getByRole("button", { name: "Send" }).click();
  await page.locator("#passcode").fill("2468");
  await page.locator("#passcode").press("Enter");
  await answer.locator(".widget.confirm .card").waitFor();
  await shot(outDir, page, "web-client-transfer");
  await page.close();
  console.log(`web-client-transfer.png and web-client-arabic.png written to ${outDir}`);
} finally {
  await browser.close();
}
