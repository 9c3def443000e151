// Browser tests of the reference web client, in Debian's Chromium driven by playwright-core
// (no browser download). Usage:
//
//	node browser.test.mjs <engine base URL> <screenshot folder> <server console: URL or file>
//
// The engine must run the offline demo (cmd/engine with no tenants file), which serves the
// client at /demo/. The proof tenant's tests read the demo bank's one-time codes on the
// server's console (its standard output): give a URL that serves it, or a file it goes to
// (go run ./cmd/engine | tee console.txt). CHROMIUM names the browser (default
// /usr/bin/chromium). Each test saves a screenshot named after it; the process exits 1 when a
// test fails. cmd/engine's TestWebClientInBrowser runs this file against a server it starts.

import { readFile, writeFile } from "node:fs/promises";
import { createHash } from "node:crypto";
import path from "node:path";
import assert from "node:assert/strict";
import { args, launch, lastAnswer, lastAnswerDone, shot as saveShot, spokenQuestion, startsFresh, suite } from "./harness.mjs";

const { base, outDir, demoURL, rest: [consoleSource] } = args("browser.test.mjs", "<server console: URL or file>");

// The fake microphone says the question once.
const browser = await launch(outDir, {
  microphone: async (dir) => ({ ...(await spokenQuestion(base, dir, "What is my balance?")), loop: false }),
});
const { context, microphone: question } = browser;

// --- helpers -------------------------------------------------------------------------------

/** openPage opens the client, waits for the home turn and records the page's engine traffic. */
async function openPage({ viewport, locale } = {}) {
  const page = await context.newPage();
  if (viewport) await page.setViewportSize(viewport);
  const traffic = [];
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/engine") || u.pathname.startsWith("/api/")) {
      traffic.push({ method: r.request().method(), path: u.pathname, status: r.status(), type: r.headers()["content-type"] ?? "" });
    }
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  page.on("console", (m) => m.type() === "error" && errors.push(new Error(m.text())));
  // Pages share the browser profile: each starts from the same settings.
  await startsFresh(page, locale ?? "en");
  await page.goto(demoURL);
  await lastAnswerDone(page);
  return { page, traffic, errors };
}

async function ask(page, text) {
  const n = await page.locator(".answer").count();
  await page.locator("#text").fill(text);
  await page.locator("#text").press("Enter");
  await page.locator(".answer").nth(n).waitFor();
  return lastAnswerDone(page);
}

async function balanceOf(page) {
  const answer = await ask(page, "what is my balance");
  const value = await answer.locator(".widget.stat .stat-value").textContent();
  return Number(value.replace(/[^0-9.]/g, ""));
}

const shot = (page, name) => saveShot(outDir, page, name);

// --- tests ---------------------------------------------------------------------------------

const { test, run } = suite();

test("balance shows a stat widget", async () => {
  const { page, errors } = await openPage();
  const signed = page.waitForRequest((r) => r.url().endsWith("/engine"));
  signed.catch(() => {});
  const home = lastAnswer(page);
  assert.ok(await home.locator(".widget.stat").count(), "the home glance shows a stat");
  assert.equal(await page.locator("#brand-name").textContent(), "Demo Bank", "the theme's display name");
  const primary = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--primary").trim());
  assert.equal(primary.toLowerCase(), "#0b5fff", "the theme's primary colour");

  const answer = await ask(page, "what is my balance");
  const stat = answer.locator(".widget.stat");
  await stat.waitFor();
  assert.match(await stat.locator(".stat-value").textContent(), /^\$[0-9,]+\.\d\d$/);
  assert.match(await stat.locator(".stat-label").textContent(), /Checking/);
  assert.equal(await answer.locator(".speak").getAttribute("aria-live"), "polite");
  assert.match(await answer.locator(".speak").textContent(), /balance is \$/);
  assert.equal(await page.locator(".bubble.user").last().textContent(), "what is my balance");

  // The session is bound to a device key that cannot leave the browser; each request is signed.
  const headers = (await signed).headers();
  assert.match(headers.authorization, /^DPoP ey/);
  const [h64, p64] = headers.dpop.split(".");
  const header = JSON.parse(Buffer.from(h64, "base64url"));
  const claims = JSON.parse(Buffer.from(p64, "base64url"));
  assert.deepEqual([header.typ, header.alg, header.jwk.crv, "d" in header.jwk], ["dpop+jwt", "ES256", "P-256", false]);
  // The reference server sent the page at 127.0.0.1 to localhost, where passkeys can work.
  assert.equal(new URL(page.url()).hostname, "localhost");
  assert.equal(claims.htu, new URL("/engine", page.url()).href);
  assert.match(headers["x-request-id"], /^prod-/);
  const key = await page.evaluate(() => {
    const k = window.__demo.client.key.privateKey;
    return { extractable: k.extractable, alg: k.algorithm.name, usages: k.usages };
  });
  assert.deepEqual(key, { extractable: false, alg: "ECDSA", usages: ["sign"] });
  assert.deepEqual(errors, []);
  await shot(page, "balance");
  await page.close();
});

test("at 1280 px the header is one row, at most 72 px high", async () => {
  const { page } = await openPage({ viewport: { width: 1280, height: 800 } });
  const header = await page.locator("header.topbar").boundingBox();
  assert.ok(header.height <= 72, `the header is ${header.height} px high`);
  // One row: the brand and every setting share a line.
  const rows = await page.evaluate(() => {
    const items = [document.querySelector(".brand"), ...document.querySelectorAll("#settings label")];
    return items.map((e) => { const r = e.getBoundingClientRect(); return { top: r.top, bottom: r.bottom }; });
  });
  const firstBottom = Math.min(...rows.map((r) => r.bottom));
  for (const r of rows) assert.ok(r.top < firstBottom, `a header item starts at ${r.top} px, below the first row's bottom ${firstBottom} px`);
  await shot(page, "header-1280");
  await page.close();
});

test("at 390 px the header is two rows, and no text of the conversation lies under it after load", async () => {
  const { page } = await openPage({ viewport: { width: 390, height: 844 } });
  const box = await page.locator("header.topbar").boundingBox();
  const headerBottom = box.y + box.height;
  // Two rows: the brand, then language, account and the menu of the other settings.
  assert.ok(box.height <= 110, `the header is ${box.height} px high`);
  for (const name of ["Confirm with", "Speak answers", "Live voice"]) {
    assert.ok(!(await page.getByLabel(name).isVisible()), `${name} waits in the menu`);
  }
  await page.getByRole("button", { name: "More settings" }).click();
  for (const name of ["Confirm with", "Speak answers", "Live voice"]) {
    assert.ok(await page.getByLabel(name).isVisible(), `the menu shows ${name}`);
  }
  assert.equal((await page.locator("header.topbar").boundingBox()).height, box.height, "the open menu lies over the conversation");
  await page.screenshot({ path: path.join(outDir, "header-390-menu.png") });
  await page.keyboard.press("Escape");
  assert.ok(!(await page.getByLabel("Live voice").isVisible()), "Escape closes the menu");
  const { first, conversation } = await page.evaluate(() => ({
    first: document.querySelector("#turns .turn").getBoundingClientRect().top,
    conversation: document.getElementById("conversation").getBoundingClientRect().top,
  }));
  assert.ok(conversation >= headerBottom, `the conversation starts at ${conversation} px, under the header's bottom at ${headerBottom} px`);
  assert.ok(first >= headerBottom, `the first message's top is at ${first} px, above the header's bottom at ${headerBottom} px`);
  await page.screenshot({ path: path.join(outDir, "header-390.png") });
  await page.close();
});

test("transactions show a list", async () => {
  const { page } = await openPage();
  const answer = await ask(page, "show my recent transactions");
  const items = answer.locator(".widget.list ul > li");
  assert.ok((await items.count()) >= 3, "at least three list items");
  assert.equal(await answer.locator(".widget.list").getByRole("list").count(), 1, "a real list");
  assert.match(await items.first().locator(".item-trailing").textContent(), /\$/);
  assert.equal(await answer.locator(".widget.list h3").textContent(), "Recent transactions");
  await shot(page, "transactions");
  await page.close();
});

test("savings goal shows a progress bar with its value", async () => {
  const { page } = await openPage();
  const answer = await ask(page, "how close am I to my savings goal");
  const bar = answer.getByRole("progressbar");
  assert.equal(await bar.count(), 1);
  assert.equal(await bar.evaluate((p) => p.value), 0.65);
  assert.equal(await bar.getAttribute("aria-valuetext"), "65%");
  assert.equal(await bar.evaluate((p) => p.labels?.length || p.getAttribute("aria-labelledby") ? "labelled" : ""), "labelled");
  await page.close();
});

test("transfer: confirm, passcode, success card, executed once", async () => {
  const { page, traffic } = await openPage();
  const executeBodies = [];
  page.on("request", (r) => {
    if (r.url().endsWith("/engine/execute")) executeBodies.push(JSON.parse(r.postData()));
  });
  const before = await balanceOf(page);
  const answer = await ask(page, "send 20 dollars to Alex");
  const widget = answer.locator(".widget.confirm");
  await widget.waitFor();
  assert.equal(await widget.locator(".confirm-body").textContent(), "Send $20.00 to Alex?");
  const send = widget.getByRole("button", { name: "Send" });

  // Two taps in a row: one gate, one execution.
  await send.evaluate((b) => { b.click(); b.click(); });
  const dialog = page.locator("#passcode-dialog");
  await dialog.waitFor({ state: "visible" });
  assert.ok(await send.isDisabled(), "the confirm button is locked while the gate is open");
  await shot(page, "transfer-passcode");

  // Too short a passcode is refused in the dialog itself.
  await page.locator("#passcode").fill("12");
  await page.locator("#passcode-ok").click();
  assert.ok(await dialog.isVisible(), "a two-digit passcode does not pass");

  await page.locator("#passcode").fill("2468");
  await page.locator("#passcode").press("Enter");
  const card = widget.locator(".card");
  await card.waitFor();
  assert.equal(await card.getAttribute("data-type"), "success");
  assert.equal(await card.locator(".card-title").textContent(), "Money sent");
  assert.match(await card.textContent(), /\$20\.00 to Alex/);
  await shot(page, "transfer-done");

  // The buttons are gone; pressing Enter again or clicking anything left cannot run it again.
  assert.equal(await widget.getByRole("button").count(), 0, "no button left on the finished widget");
  await page.keyboard.press("Enter");
  const executes = traffic.filter((r) => r.path === "/engine/execute");
  assert.deepEqual(executes.map((r) => r.status), [200], "exactly one execute call");
  // The device key signed the proof of this action, and the engine, which checks a proof
  // whenever one is sent, accepted it.
  const [h] = executeBodies[0].auth.proof.split(".");
  assert.equal(JSON.parse(atob(h.replace(/-/g, "+").replace(/_/g, "/"))).typ, "action-proof+jwt");
  assert.equal(await widget.locator(".card").count(), 1);

  // The engine answers a replayed token with the first result; the bank moved the money once.
  const replay = await page.evaluate(() => {
    const w = window.__demo.state.confirms.at(-1);
    return window.__demo.client.execute(w.execute, { method: "passcode", verifiedAt: new Date().toISOString() }, { locale: "en" });
  });
  assert.equal(replay.done.title, "Money sent", "the replay answers the first result");
  const after = await balanceOf(page);
  assert.equal(Math.round((before - after) * 100), 2000, `balance ${before} → ${after}: moved once`);
  await page.close();
});

// --- the proof tenant: devices enrolled by the bank -----------------------------------------

/** userLabel is how the demo bank names the user of token on its console: SHA-256's first 6 hex digits. */
const userLabel = (token) => "user " + createHash("sha256").update(token).digest("hex").slice(0, 6);

/** consoleText reads the reference server's console: from the URL or the file given as the third argument. */
async function consoleText() {
  assert.ok(consoleSource, "pass the server's console (a URL that serves it, or a file it is written to) as the third argument");
  if (/^https?:/.test(consoleSource)) return (await fetch(consoleSource)).text();
  return readFile(consoleSource, "utf8");
}

/** codesFor returns the one-time codes the demo bank printed for token's user, oldest first. */
async function codesFor(token) {
  const line = new RegExp(`^demo bank: one-time code for ${userLabel(token)}: ([0-9]{6})$`, "gm");
  return [...(await consoleText()).matchAll(line)].map((m) => m[1]);
}

/**
 * enrolByCode goes through the bank's enrolment on page: the user asks for a code, reads it on
 * the server's console (the bank's SMS in this demo), types it and enrols. With wrong, a wrong
 * code is typed first, and the bank's refusal is checked.
 */
async function enrolByCode(page, token, { wrong = false } = {}) {
  const panel = page.locator(".enrol");
  await panel.waitFor();
  const before = (await codesFor(token)).length;
  await panel.getByRole("button", { name: "Send me a code" }).click();
  const sent = panel.locator("#enrol-sent");
  await sent.waitFor();
  assert.equal(await sent.textContent(),
    `Demo Bank sent a one-time code. In this demo it is printed on the engine's console: look for the line 'demo bank: one-time code for ${userLabel(token)}'.`);
  let codes = [];
  for (const until = Date.now() + 5000; codes.length <= before && Date.now() < until;) {
    codes = await codesFor(token);
    if (codes.length <= before) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(codes.length > before, "the bank printed a new code on the console");
  const code = codes.at(-1);
  if (wrong) {
    await panel.getByLabel("One-time code").fill(String((Number(code) + 1) % 1e6).padStart(6, "0"));
    await panel.getByRole("button", { name: "Enrol device" }).click();
    const error = panel.getByRole("alert");
    await error.waitFor();
    assert.equal(await error.textContent(), "The code is wrong, or was sent for another key. 4 tries left.", "the bank's own message");
  }
  await panel.getByLabel("One-time code").fill(code);
  await panel.getByRole("button", { name: "Enrol device" }).click();
  await panel.waitFor({ state: "detached" });
}

/**
 * openProofPage opens the page on the proof tenant for user (with gate, if given) at the
 * loopback address the server printed, and records the page's calls. Its settings are
 * fresh once: a reload or a switch of the gate keeps what the page stored since.
 */
async function openProofPage(user, { gate, cdp: wantCDP = false } = {}) {
  const page = await context.newPage();
  let cdp = null;
  let authenticatorId = "";
  if (wantCDP) {
    cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable", { enableUI: false });
    ({ authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        ctap2Version: "ctap2_1",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    }));
  }
  const calls = [];
  const bodies = { session: [], execute: [] };
  page.on("request", (r) => {
    if (r.url().endsWith("/api/v1/create-session")) bodies.session.push(JSON.parse(r.postData()));
    if (r.url().endsWith("/engine/execute")) bodies.execute.push(JSON.parse(r.postData()));
  });
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/engine") || u.pathname.startsWith("/api/") || u.pathname.startsWith("/demo/bank/")) calls.push(`${u.pathname} ${r.status()}`);
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  await page.addInitScript((u) => {
    if (sessionStorage.getItem("fresh")) return;
    sessionStorage.setItem("fresh", "1");
    localStorage.clear();
    localStorage.setItem("engine-demo.locale", "en");
    localStorage.setItem("engine-demo.user", u);
  }, user);
  const url = new URL("/demo/?key=pk_demo_proof", base);
  if (gate) url.searchParams.set("gate", gate);
  await page.goto(url.href);
  return { page, calls, bodies, errors, cdp, authenticatorId };
}

/** sendToAlex asks for a transfer of 20 dollars to Alex and confirms it; passcode for the key gate. */
async function sendToAlex(page, { passcode = true } = {}) {
  const answer = await ask(page, "send 20 dollars to Alex");
  const widget = answer.locator(".widget.confirm");
  await widget.getByRole("button", { name: "Send" }).click();
  if (passcode) {
    await page.locator("#passcode").fill("2468");
    await page.locator("#passcode").press("Enter");
  }
  const card = widget.locator(".card");
  await card.waitFor();
  return card;
}

test("proof tenant, key gate: the bank enrols the device by one-time code, then money moves", async () => {
  const user = "proof-key-user";
  const { page, calls, bodies, errors } = await openProofPage(user);

  // Not enrolled: the bank's enrolment is offered, and nothing failed before the user acted.
  const panel = page.locator(".enrol");
  await panel.waitFor();
  assert.equal(await page.locator("#session-note").textContent(), "This device is not enrolled with Demo Bank yet.");
  assert.equal(await page.locator(".error:visible, [role=alert]:visible").count(), 0, "no failure shown on load");
  assert.deepEqual(calls, ["/api/v1/create-session 403"]);
  await shot(page, "enrol-offered");

  await enrolByCode(page, user, { wrong: true });
  // The bank enrolled the device key, the one that signs the session's requests and proofs.
  const enrolled = (await page.evaluate(() => window.__demo.client.gatePublicKey()));
  assert.deepEqual(Object.keys(enrolled).sort(), ["crv", "kty", "x", "y"]);
  assert.equal(enrolled.x, bodies.session[0].public_key.x);
  const home = await lastAnswerDone(page);
  assert.ok(await home.locator(".widget.stat").count(), "the home glance, once enrolled");
  assert.equal(await page.locator("#brand-name").textContent(), "Demo Bank");
  assert.deepEqual(calls.filter((c) => !c.startsWith("/engine ")), [
    "/api/v1/create-session 403",
    "/demo/bank/devices/code 202",
    "/demo/bank/devices 403",
    "/demo/bank/devices 201",
    "/api/v1/create-session 201",
  ]);

  const before = await balanceOf(page);
  const card = await sendToAlex(page);
  assert.equal(await card.locator(".card-title").textContent(), "Money sent");
  assert.ok(bodies.execute[0].auth.proof, "the device key signed the action's proof");
  assert.equal(Math.round((before - (await balanceOf(page))) * 100), 2000, "the bank moved $20.00");
  await shot(page, "enrolled-transfer");

  // The key is kept in IndexedDB: after a reload the device is still enrolled.
  const mark = calls.length;
  await page.reload();
  await lastAnswerDone(page);
  assert.equal(await page.locator(".enrol").count(), 0, "no enrolment after a reload");
  assert.deepEqual(calls.slice(mark).filter((c) => c.startsWith("/api/")), ["/api/v1/create-session 201"]);
  assert.deepEqual(errors, []);
  await page.close();
});

test("proof tenant, passkey chosen on the page: enrolled, themed, approved with user verification, refused without", async () => {
  const user = "proof-passkey-user";
  // The device key first, so that the page has met the tenant's theme.
  const { page, calls, bodies, errors, cdp, authenticatorId } = await openProofPage(user, { cdp: true });
  await enrolByCode(page, user);
  await lastAnswerDone(page);

  // The passkey's creation options list RS256 beside ES256, ES256 first: Chromium warns
  // about a list without both.
  await page.addInitScript(() => {
    const create = navigator.credentials.create.bind(navigator.credentials);
    navigator.credentials.create = (o) => ((window.__algs = o?.publicKey?.pubKeyCredParams?.map((p) => p.alg)), create(o));
  });
  const warnings = [];
  page.on("console", (m) => /pubKeyCredParams/.test(m.text()) && warnings.push(m.text()));

  // The page's own control, visible, switches to the passkey gate.
  assert.ok(await page.getByLabel("Confirm with").isVisible(), "the gate control is on the page");
  await page.getByLabel("Confirm with").selectOption("passkey");
  await page.waitForURL((u) => u.searchParams.get("gate") === "passkey");
  assert.equal(new URL(page.url()).hostname, "localhost", "passkeys need a domain: the page is at localhost");
  const panel = page.locator(".enrol");
  await panel.waitFor();
  // The passkey was created for this device key; the bank does not know it yet.
  const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
  assert.equal(credentials.length, 1, "one passkey registered");
  assert.equal(credentials[0].rpId, "localhost");
  assert.deepEqual(await page.evaluate(() => window.__algs), [-7, -257], "ES256, then RS256");
  assert.deepEqual(warnings, [], "no warning about pubKeyCredParams");
  assert.match(await panel.textContent(), /this passkey is yours/);
  assert.equal(await page.locator("#brand-name").textContent(), "Demo Bank", "the tenant's theme is kept before the session");
  assert.equal(await page.locator(".error:visible").count(), 0, "no failure shown before the user acted");
  await shot(page, "enrol-passkey");

  await enrolByCode(page, user);
  await lastAnswerDone(page);
  const withPasskey = bodies.session.filter((b) => b.gate_credential);
  assert.equal(withPasskey.at(-1).gate_credential.rawId, credentials[0].credentialId.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""));
  assert.deepEqual(calls.filter((c) => c.startsWith("/api/")).slice(-2), ["/api/v1/create-session 403", "/api/v1/create-session 201"]);
  const primary = await page.evaluate(() => getComputedStyle(document.documentElement).getPropertyValue("--primary").trim());
  assert.equal(primary.toLowerCase(), "#0b5fff", "the theme's primary colour in passkey mode");

  const before = await balanceOf(page);
  const card = await sendToAlex(page, { passcode: false });
  assert.equal(await card.locator(".card-title").textContent(), "Money sent");
  assert.ok(!(await page.locator("#passcode-dialog").isVisible()), "the passkey's prompt is the check: no passcode dialog");
  const sent = bodies.execute.at(-1).auth;
  assert.ok(sent.webauthn?.signature && !sent.proof, "the action is approved by the passkey's assertion");
  await shot(page, "transfer-passkey");

  // The user's verification fails: the authenticator refuses, nothing is sent, the confirm
  // stays usable.
  const executes = () => calls.filter((c) => c.startsWith("/engine/execute "));
  await cdp.send("WebAuthn.setUserVerified", { authenticatorId, isUserVerified: false });
  const answer = await ask(page, "send 5 dollars to Sam");
  const widget = answer.locator(".widget.confirm");
  await widget.getByRole("button", { name: "Send" }).click();
  await widget.locator(".error").waitFor();
  assert.match(await widget.locator(".error").textContent(), /device check did not pass/);
  assert.ok(await widget.getByRole("button", { name: "Send" }).isEnabled(), "the confirm may be tried again");
  // An assertion made without user verification, sent anyway, is refused by the engine.
  const refused = await page.evaluate(async () => {
    const w = window.__demo.state.confirms.at(-1);
    try {
      await window.__demo.client.execute(w.execute, { method: "passcode" }, { locale: "en" }, { userVerification: "discouraged" });
      return "executed";
    } catch (err) {
      return `${err.status} ${err.code}`;
    }
  });
  assert.equal(refused, "403 invalid_device_proof");
  assert.deepEqual(executes(), ["/engine/execute 200", "/engine/execute 403"], "the refused assertion is the only other execute");
  const after = await balanceOf(page);
  assert.equal(Math.round((before - after) * 100), 2000, `balance ${before} → ${after}: only the approved transfer moved`);
  assert.deepEqual(errors, []);
  await cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId });
  await page.close();
});

test("a suggestion chip starts a turn, by keyboard too", async () => {
  const { page } = await openPage();
  const chip = lastAnswer(page).locator(".chips button").filter({ hasText: "Show my recent transactions" });
  assert.equal(await chip.count(), 1, "the home glance suggests the transactions");
  const n = await page.locator(".answer").count();
  await chip.focus();
  await page.keyboard.press("Enter");
  await page.locator(".answer").nth(n).waitFor();
  const answer = await lastAnswerDone(page);
  assert.equal(await page.locator(".bubble.user .user-text").last().textContent(), "Show my recent transactions");
  assert.ok(await answer.locator(".widget.list li").count() >= 3);
  await shot(page, "suggestion-chip");
  await page.close();
});

test("an Arabic-locale turn is laid out right to left", async () => {
  const { page } = await openPage({ locale: "ar", viewport: { width: 420, height: 860 } });
  assert.equal(await page.locator("#locale").inputValue(), "ar");
  const answer = await ask(page, "ما هو رصيدي");
  assert.equal(await answer.getAttribute("dir"), "rtl");
  assert.equal(await answer.evaluate((a) => getComputedStyle(a).direction), "rtl");
  assert.equal(await answer.locator(".widget.stat .stat-value").evaluate((e) => getComputedStyle(e).direction), "rtl");
  assert.match(await answer.locator(".speak").textContent(), /رصيد/);
  assert.equal(await page.evaluate(() => document.documentElement.dir), "rtl");
  await shot(page, "arabic-rtl");
  await page.close();
});

test("the answer plays through POST /engine/tts as a WAV", async () => {
  const { page, traffic } = await openPage();
  const answer = await ask(page, "what is my balance");
  const [resp] = await Promise.all([
    page.waitForResponse((r) => r.url().endsWith("/engine/tts")),
    answer.getByRole("button", { name: "Listen" }).click(),
  ]);
  assert.equal(resp.status(), 200);
  assert.match(resp.headers()["content-type"], /^audio\/wav/);
  await page.waitForFunction(() => {
    const a = document.getElementById("player");
    return a.src.startsWith("blob:") && a.readyState >= 1 && Number.isFinite(a.duration) && a.duration > 0;
  });
  const audio = await page.evaluate(() => {
    const a = document.getElementById("player");
    return { type: a.dataset.type, bytes: Number(a.dataset.bytes), duration: a.duration, error: a.error?.code ?? 0 };
  });
  assert.equal(audio.type, "audio/wav");
  assert.ok(audio.bytes > 1000 && audio.duration > 0.5, `audio ${JSON.stringify(audio)}`);
  assert.equal(audio.error, 0);
  assert.ok(traffic.some((r) => r.path === "/engine/tts" && r.status === 200));
  await page.close();
});

test("with live voice off, a voice turn records the microphone as 16 kHz mono WAV", async () => {
  const { page } = await openPage();
  // Live voice is the page's default (browser-voice.test.mjs); the user may turn it off, and
  // the mic button then records a whole message. The choice is kept for the next visit.
  await page.getByLabel("Live voice").uncheck();
  assert.equal(await page.evaluate(() => localStorage.getItem("engine-demo.live")), "0");
  assert.equal(await page.locator("#mic-label").textContent(), "Start recording");
  const turn = page.waitForRequest((r) => r.url().endsWith("/engine") && r.postData()?.includes("audio_base64"));
  turn.catch(() => {}); // awaited below; a failure before then is reported there
  await page.locator("#mic").click();
  await page.waitForFunction(() => document.getElementById("mic").getAttribute("aria-pressed") === "true");
  await page.waitForTimeout(Math.ceil(question.seconds * 1000) + 700);
  await page.locator("#mic").click();
  const body = JSON.parse((await turn).postData());
  assert.equal(body.mode, "voice");
  const wav = Buffer.from(body.audio_base64, "base64");
  await writeFile(path.join(outDir, "voice-recorded.wav"), wav);
  assert.equal(wav.subarray(0, 4).toString("latin1"), "RIFF");
  assert.equal(wav.subarray(8, 12).toString("latin1"), "WAVE");
  assert.equal(wav.readUInt16LE(20), 1, "PCM");
  assert.equal(wav.readUInt16LE(22), 1, "mono");
  assert.equal(wav.readUInt32LE(24), 16000, "16 kHz");
  assert.equal(wav.readUInt16LE(34), 16, "16-bit");
  const answer = await lastAnswerDone(page);
  const heard = await page.locator(".bubble.user .user-text").last().textContent();
  assert.match(heard, /balance/i, "the transcript shows what was heard");
  assert.equal(await answer.locator(".widget.stat").count(), 1);
  await shot(page, "voice");
  await page.close();
});

test("a forced 401 is recovered once; a second one is shown, not looped", async () => {
  const { page, traffic } = await openPage();
  await page.evaluate(() => window.__demo.corruptSession());
  let mark = traffic.length;
  const answer = await ask(page, "what is my balance");
  assert.equal(await answer.locator(".widget.stat").count(), 1, "the turn was answered");
  assert.deepEqual(traffic.slice(mark).map((r) => `${r.path} ${r.status}`), [
    "/engine 401",
    "/api/v1/create-session 201",
    "/engine 200",
  ]);
  // Every new session is broken: one renewal, then a plain sentence.
  await page.route("**/api/v1/create-session", async (route) => {
    const resp = await route.fetch();
    const s = await resp.json();
    s.session_token = s.session_token.slice(0, -6) + "AAAAAA";
    await route.fulfill({ response: resp, json: s });
  });
  await page.evaluate(() => window.__demo.corruptSession());
  mark = traffic.length;
  const failed = await ask(page, "what is my balance");
  assert.deepEqual(traffic.slice(mark).map((r) => `${r.path} ${r.status}`), [
    "/engine 401",
    "/api/v1/create-session 201",
    "/engine 401",
  ]);
  assert.match(await failed.locator(".error").textContent(), /session could not be renewed/);
  await shot(page, "session-recovery");
  await page.close();
});

test("a refused DPoP proof re-creates the session once, like any 401", async () => {
  const { page, traffic } = await openPage();
  await ask(page, "what is my balance"); // a session exists
  let spoil = 1;
  await page.route("**/engine", async (route) => {
    const headers = route.request().headers();
    if (spoil-- > 0) headers.dpop = headers.dpop.slice(0, -6) + "AAAAAA";
    await route.continue({ headers });
  });
  const mark = traffic.length;
  const answer = await ask(page, "what is my balance");
  assert.equal(await answer.locator(".widget.stat").count(), 1, "the turn was answered");
  assert.deepEqual(traffic.slice(mark).map((r) => `${r.path} ${r.status}`), [
    "/engine 401",
    "/api/v1/create-session 201",
    "/engine 200",
  ]);
  await page.close();
});

test("a turn that fails mid-stream shows the apology and no half-drawn widget", async () => {
  const { page } = await openPage();
  // A stream as the engine writes one when the model breaks off after a confirm widget,
  // with CRLF line ends, a keep-alive comment and a data field split over two lines.
  const spec = { speak: "Sorry, something went wrong. Please try again.", widgets: [], meta: { direction: "ltr", locale: "en", error: "model_error" } };
  const body = [
    'id: 1\r\nevent: start\r\ndata: {"turnId":"t1","conversationId":"c1"}\r\n\r\n',
    ": ping\r\n\r\n",
    'id: 2\r\nevent: speak\r\ndata: {"delta":\r\ndata: "I can send"}\r\n\r\n',
    'id: 3\r\nevent: widget\r\ndata: {"type":"confirm","id":"x","title":"Send money","body":"Send?","confirmLabel":"Send","cancelLabel":"Cancel","execute":{"tool":"transfer","arguments":{},"token":"t"}}\r\n\r\n',
    'id: 4\r\nevent: error\r\ndata: {"code":"model_error","message":"the model broke off","retryable":true}\r\n\r\n',
    `id: 5\r\nevent: done\r\ndata: ${JSON.stringify(spec)}\r\n\r\n`,
  ].join("");
  await page.route("**/engine", (route) => route.fulfill({ status: 200, contentType: "text/event-stream", body }));
  const answer = await ask(page, "send 20 dollars to Alex");
  assert.equal(await answer.locator(".speak").textContent(), spec.speak);
  assert.equal(await answer.locator(".widget").count(), 0, "the confirm widget drawn before the error is gone");
  await page.unroute("**/engine");
  await page.close();
});

test("a widget of the bank's own type is drawn from its fields", async () => {
  const { page, errors } = await openPage();
  const answer = await ask(page, "show my card");
  const card = answer.locator('.widget.unknown[data-type="card"]');
  await card.waitFor();
  assert.ok(await card.isVisible(), "the card is shown, not dropped");
  assert.equal(await card.locator("h3").textContent(), "Everyday Debit");
  assert.deepEqual(await card.locator("dl > dt").allTextContents(), ["Expires", "Network", "Number", "Status"], "the fields in the widget's order");
  assert.ok((await card.locator("dl > dd").allTextContents()).includes("•••• 4242"));
  assert.equal(await card.getAttribute("aria-labelledby"), await card.locator("h3").getAttribute("id"));
  // Values are text, never markup, and a long unbroken one wraps inside the card.
  const drawn = await page.evaluate(async () => {
    const { renderWidget } = await import("./widgets.js");
    const w = renderWidget({ type: "note", label: "<img src=x onerror=alert(1)>", url: "https://example.com/" + "x".repeat(300), nested: { a: { b: { c: 1 } } } });
    document.querySelector(".answer:last-of-type")?.append(w);
    const holder = w.parentElement ?? document.body;
    return { imgs: w.querySelectorAll("img").length, heading: w.querySelector("h3").textContent, fits: w.scrollWidth <= w.clientWidth + 1, text: w.textContent, holder: holder.clientWidth };
  });
  assert.equal(drawn.imgs, 0, "no element made from a value");
  assert.equal(drawn.heading, "<img src=x onerror=alert(1)>");
  assert.ok(drawn.fits, "a 300-character value wraps");
  assert.match(drawn.text, /Nested.*A.*…/s, "nesting is bounded");
  assert.deepEqual(errors, []);
  await shot(page, "card-fallback");
  await page.close();
});

test("a long unbroken word wraps, and each button has a name of its own", async () => {
  const { page } = await openPage({ viewport: { width: 390, height: 800 } });
  await ask(page, "https://example.com/" + "a".repeat(400));
  const overflow = await page.evaluate(() => {
    const c = document.getElementById("conversation");
    const wide = [...c.querySelectorAll(".bubble, .answer")].map((e) => e.scrollWidth - c.clientWidth);
    return Math.max(c.scrollWidth - c.clientWidth, ...wide);
  });
  assert.ok(overflow <= 0, `a turn is ${overflow} px wider than the conversation`);
  await ask(page, "send 20 dollars to Alex");
  assert.equal(await page.getByRole("button", { name: "Send", exact: true }).count(), 1, "one button named Send: the confirm's");
  assert.equal(await page.getByRole("button", { name: "Send message", exact: true }).count(), 1);
  await page.close();
});

// --- run -----------------------------------------------------------------------------------

await run(browser, outDir);
