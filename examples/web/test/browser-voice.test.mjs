// Browser tests of the web client's live voice over the voice socket (examples/web/static/
// voice.js and its parts), in Debian's Chromium driven by playwright-core. Usage:
//
//	node browser-voice.test.mjs <engine base URL> <screenshot folder>
//
// The engine must run the offline demo with its speech engines (cmd/engine with no tenants
// file, espeak-ng or flite, pocketsphinx), which serves the client at /demo/. Chromium's fake
// microphone plays "What is my balance?", synthesized by the engine itself, followed by two
// seconds of silence, in a loop: the page hears the question, the engine answers it, and the
// question heard again while the answer plays is a barge-in. CHROMIUM names the browser
// (default /usr/bin/chromium). Each test saves a screenshot; the process exits 1 when a test
// fails. cmd/engine's TestWebVoiceSocketInBrowser runs this file against a server it starts.

import { randomBytes } from "node:crypto";
import http from "node:http";
import assert from "node:assert/strict";
import { FrameResampler, FRAME_SAMPLES, pcm16Base64, base64PCM16ToFloat, floatToPCM16 } from "../static/pcm.js";
import { SpeechDetector } from "../static/speech-detector.js";
import { TIMEOUT, args, launch, lastAnswerDone, noise, shot as saveShot, spokenQuestion, startsFresh, suite } from "./harness.mjs";

const { base, outDir, demoURL } = args("browser-voice.test.mjs");

// The fake microphone says the question after half a second, then 1.5 s of silence, in
// a loop, over a microphone's own noise (-65 dBFS) from its first frame, as a real one's: the
// page learns the room before the question.
const browser = await launch(outDir, {
  microphone: async (dir) => ({
    ...(await spokenQuestion(base, dir, "What is my balance?", { leadSeconds: 0.5, silenceSeconds: 1.5, noiseDB: -65, requestID: "prod-web-test-live-voice" })),
    loop: true,
  }),
});
const { context, microphone: question } = browser;

// --- helpers -------------------------------------------------------------------------------

/**
 * openPage opens the client, waits for the home turn and records the page's engine traffic
 * and its voice sockets' messages.
 */
async function openPage() {
  const page = await context.newPage();
  const traffic = [];
  page.on("response", (r) => {
    const u = new URL(r.url());
    if (u.pathname.startsWith("/engine") || u.pathname.startsWith("/api/")) {
      traffic.push({ method: r.request().method(), path: u.pathname, status: r.status() });
    }
  });
  const sockets = [];
  page.on("websocket", (ws) => {
    const s = { url: ws.url(), sent: [], received: [], closed: false };
    sockets.push(s);
    ws.on("framesent", (f) => s.sent.push(JSON.parse(f.payload)));
    ws.on("framereceived", (f) => {
      const m = JSON.parse(f.payload);
      if (m.type === "audio") m.chunk = m.chunk.length; // keep the log small
      s.received.push(m);
    });
    ws.on("close", () => (s.closed = true));
  });
  const errors = [];
  page.on("pageerror", (e) => errors.push(e));
  const consoleErrors = [];
  page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
  await startsFresh(page);
  await page.goto(demoURL);
  await lastAnswerDone(page);
  return { page, traffic, sockets, errors, consoleErrors };
}

const shot = (page, name) => saveShot(outDir, page, name);

/** stats returns the page's window.__voiceStats. */
const stats = (page) => page.evaluate(() => JSON.parse(JSON.stringify(window.__voiceStats)));

/**
 * waitStats waits until fn() is true in the page (it reads window.__voiceStats), and returns
 * the stats.
 */
async function waitStats(page, fn, timeout = TIMEOUT) {
  await page.waitForFunction(fn, null, { timeout });
  return stats(page);
}

/**
 * upgrade asks for the voice socket over plain HTTP with the subprotocols a page offers, and
 * returns the status and the problem's code of a refusal (101 when it was accepted).
 */
function upgrade(ticket) {
  const u = new URL("/engine/stream", base);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: u.hostname,
      port: u.port,
      path: u.pathname,
      headers: {
        Connection: "Upgrade",
        Upgrade: "websocket",
        "Sec-WebSocket-Version": "13",
        "Sec-WebSocket-Key": randomBytes(16).toString("base64"),
        "Sec-WebSocket-Protocol": `engine.v1, ticket.${ticket}`,
      },
    });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode, code: "" });
    });
    req.on("response", async (res) => {
      let body = "";
      for await (const c of res) body += c;
      let code = "";
      try {
        code = JSON.parse(body).code;
      } catch {
        // not a problem document
      }
      resolve({ status: res.statusCode, code });
    });
    req.on("error", reject);
    req.end();
  });
}

// --- tests ---------------------------------------------------------------------------------

const { test, run, measured } = suite();

// The page's own parts that need no browser run in Node first.

/** frames cuts float samples at 16 kHz into the detector's 20 ms frames of PCM16. */
function frames(samples) {
  const out = [];
  for (let off = 0; off + FRAME_SAMPLES <= samples.length; off += FRAME_SAMPLES) out.push(floatToPCM16(samples.subarray(off, off + FRAME_SAMPLES)));
  return out;
}

/** events runs a detector over samples and returns its events with their times in ms. */
function events(samples) {
  const d = new SpeechDetector();
  return frames(samples).flatMap((f, i) => {
    const ev = d.push(f);
    return ev ? [{ ev, ms: (i + 1) * 20 }] : [];
  });
}

/** voice returns seconds of a voice-like sound: a 150 Hz buzz with harmonics, in syllables. */
function voice(seconds, peak = 0.3) {
  const out = new Float32Array(seconds * 16000);
  for (let i = 0; i < out.length; i++) {
    const t = i / 16000;
    const syllable = 0.35 + 0.65 * Math.abs(Math.sin(Math.PI * 4 * t));
    let v = 0;
    for (let h = 1; h <= 8; h++) v += Math.sin(2 * Math.PI * 150 * h * t) / h;
    out[i] = (peak / 2.7) * syllable * v;
  }
  return out;
}

function concat(...parts) {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

test("the end-of-speech detector: speech starts after ~100 ms, ends after 700 ms of silence", async () => {
  const bg = (s, seed) => noise(s, -55, seed);
  const under = bg(1.2, 2);
  const speech = voice(1.2).map((v, i) => v + under[i]);
  const mixed = concat(bg(1, 1), speech, bg(1.5, 3));
  const got = events(mixed);
  assert.deepEqual(got.map((e) => e.ev), ["start", "end"], JSON.stringify(got));
  assert.ok(got[0].ms >= 1080 && got[0].ms <= 1200, `speech heard at ${got[0].ms} ms; it starts at 1000`);
  assert.ok(got[1].ms >= 2200 + 680 && got[1].ms <= 2200 + 800, `end of speech at ${got[1].ms} ms; speech ends at 2200`);
  // A line muted (digital silence) and unmuted to speak: the room's floor stays learnt.
  const muted = events(concat(bg(0.5, 4), new Float32Array(8000), voice(1), new Float32Array(16000)));
  assert.deepEqual(muted.map((e) => e.ev), ["start", "end"], JSON.stringify(muted));
  // A microphone that starts with digital silence, then the room: its noise is the floor.
  assert.deepEqual(events(concat(new Float32Array(8000), noise(4, -50, 5))), [], "noise after digital silence");
});

test("the end-of-speech detector ignores steady noise, hum and a click", async () => {
  assert.deepEqual(events(noise(3, -30)), [], "loud steady noise is the floor, not speech");
  const hum = Float32Array.from({ length: 3 * 16000 }, (_, i) => (i < 16000 ? 0.001 : 0.3) * Math.sin((2 * Math.PI * 50 * i) / 16000));
  assert.deepEqual(events(hum), [], "mains hum switched on");
  const click = concat(noise(1, -55), Float32Array.from({ length: 320 }, () => 0.8), noise(1, -55, 7));
  assert.deepEqual(events(click), [], "a 20 ms click");
});

test("microphone audio becomes 20 ms frames of 16 kHz PCM16 without drift", async () => {
  for (const rate of [48000, 44100, 16000]) {
    const got = [];
    const r = new FrameResampler(rate, (f) => got.push(f));
    const block = Math.round(rate / 50);
    const tone = Float32Array.from({ length: rate * 3 }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / rate));
    for (let off = 0; off < tone.length; off += block) r.push(tone.subarray(off, off + block));
    assert.equal(got.length, 150, `${rate} Hz: 3 s gives 150 frames`);
    assert.ok(got.every((f) => f instanceof Int16Array && f.length === FRAME_SAMPLES));
  }
  const pcm = Int16Array.from([0, 1, -1, 32767, -32768, 1234]);
  const b64 = pcm16Base64(pcm);
  assert.equal(b64, Buffer.from(new Uint8Array(pcm.buffer)).toString("base64"), "little-endian bytes in base64");
  assert.deepEqual([...base64PCM16ToFloat(b64)].map((v) => Math.round(v * 32768)), [...pcm]);
});

test("a live voice turn over the socket, then a barge-in", async () => {
  const { page, traffic, sockets, errors, consoleErrors } = await openPage();
  const ticketRequest = page.waitForRequest((r) => r.url().endsWith("/engine/stream-ticket"));
  ticketRequest.catch(() => {}); // awaited below
  const mic = page.locator("#mic");
  // A fresh page holds live voice: the setting is on and the mic button says so.
  assert.equal(await page.getByLabel("Live voice").isChecked(), true, "live voice is the default");
  assert.equal(await page.locator("#mic-label").textContent(), "Start live voice");
  const conversationId = await page.evaluate(() => window.__demo.state.conversationId);
  assert.ok(conversationId, "the home turn named the conversation");
  const turnsBefore = await page.locator(".turn").count();

  await mic.click();
  await page.waitForFunction(() => document.getElementById("mic").getAttribute("aria-pressed") === "true");
  assert.equal(await page.locator("#mic-label").textContent(), "Stop live voice");
  assert.equal(await page.locator("#voice-status").getAttribute("role"), "status");

  // (a) The question is heard, answered over the socket and drawn.
  let s = await waitStats(page, () => window.__voiceStats.turns[0]?.doneReceived != null);
  const turn = page.locator(".turn").nth(turnsBefore);
  const answer = turn.locator(".answer");
  assert.match(await turn.locator(".bubble.user .user-text").textContent(), /balance/i, "the transcript is shown");
  assert.ok(await turn.locator(".bubble.user.voice").count(), "a voice bubble");
  assert.match(await answer.locator(".speak").textContent(), /You have \$[0-9,]+\.\d\d in Everyday Checking/);
  assert.equal(await answer.locator(".widget.stat").count(), 1, "the stat widget");
  assert.match(await answer.locator(".widget.stat .stat-value").textContent(), /^\$[0-9,]+\.\d\d$/);
  assert.equal(await answer.getAttribute("aria-busy"), "false");
  await shot(page, "voice-live-answer");

  // The ticket was asked with the page's headers and the socket opened with it.
  const ticketCalls = traffic.filter((r) => r.path === "/engine/stream-ticket");
  assert.deepEqual(ticketCalls.map((r) => `${r.method} ${r.status}`), ["POST 201"]);
  const headers = (await ticketRequest).headers();
  assert.equal(headers["x-engine-key"], "pk_demo");
  assert.equal(headers["x-token"], "demo-user");
  assert.match(headers["x-request-id"], /^prod-web-/);
  assert.match(headers.authorization, /^DPoP ey/, "the session's token");
  const claims = JSON.parse(Buffer.from(headers.dpop.split(".")[1], "base64url"));
  // The page's origin: the reference server sends a loopback address's demo page to localhost.
  assert.equal(claims.htu, new URL("/engine/stream-ticket", page.url()).href, "a DPoP proof for the ticket request");
  assert.equal(sockets.length, 1, "one socket");
  const ws = sockets[0];
  assert.equal(new URL(ws.url).pathname, "/engine/stream");
  assert.deepEqual(ws.sent[0].context, { locale: "en", sessionId: conversationId }, "the first message carries the context");
  assert.ok(ws.sent.slice(1).every((m) => !m.context), "the context is sent once");
  const audio = ws.sent.filter((m) => m.type === "audio");
  assert.ok(audio.length >= 40, `${audio.length} audio frames sent`);
  assert.ok(audio.every((m) => Buffer.from(m.chunk, "base64").length === 640), "frames of 320 samples of PCM16");
  const eos = ws.sent.findIndex((m) => m.type === "end_of_speech");
  assert.ok(eos > 0, "end_of_speech sent");
  // Only the speech goes up, with its pre-roll and the silence that ended it: about the
  // question's length plus a second, not the whole loop.
  const seconds = (eos * 20) / 1000;
  assert.ok(seconds < question.seconds + 1.6, `${seconds} s of audio sent before end_of_speech for a ${question.seconds.toFixed(2)} s question`);
  const kinds = ws.received.map((m) => m.type);
  assert.equal(kinds[0], "transcript");
  assert.ok(kinds.indexOf("audio") < kinds.indexOf("spec") && kinds.indexOf("spec") < kinds.indexOf("done"), kinds.join(" "));

  // (b) The answer started playing before its spec arrived.
  const t0 = s.turns[0];
  assert.ok(t0.firstAudioReceived != null && t0.firstAudioPlaying != null && t0.specReceived != null, JSON.stringify(t0));
  assert.ok(t0.firstAudioPlaying < t0.specReceived, `first audio playing at ${t0.firstAudioPlaying}, spec at ${t0.specReceived}`);
  const ttfa = Math.round(t0.firstAudioPlaying - t0.endOfSpeechSent);
  measured.push(`time to first audio: ${ttfa} ms`);
  console.log(`time to first audio: ${ttfa} ms (end_of_speech sent → first chunk playing; first audio message ${Math.round(t0.firstAudioReceived - t0.endOfSpeechSent)} ms, spec ${Math.round(t0.specReceived - t0.endOfSpeechSent)} ms)`);
  assert.ok(ttfa > 0 && ttfa < 5000, `time to first audio ${ttfa} ms`);

  // (c) The looped question is heard again while the answer plays: the page cancels the
  // answer and stops every chunk at once.
  s = await waitStats(page, () => window.__voiceStats.bargeIns[0]?.playbackStopped != null, 15_000);
  const b = s.bargeIns[0];
  assert.ok(b.cancelSent != null, "cancel sent");
  assert.ok(b.sources > 0, "chunks were playing or scheduled");
  assert.equal(b.activeAfter, 0, "nothing left scheduled");
  const stopMs = b.playbackStopped - b.cancelSent;
  console.log(`barge-in: ${b.sources} chunks stopped ${stopMs.toFixed(1)} ms after the cancel`);
  assert.ok(stopMs >= 0 && stopMs <= 100, `playback stopped ${stopMs} ms after the cancel`);
  assert.ok(b.cancelSent > t0.firstAudioPlaying, "the cancel came while the answer played");
  assert.equal(await page.evaluate(() => window.__demo.voice.player.active), false, "no audio playing");
  const cancel = ws.sent.findIndex((m) => m.type === "cancel");
  assert.ok(cancel > eos, "cancel sent on the socket");
  // The cancel goes 200 ms into the new utterance, between two of its 20 ms frames.
  for (let i = 0; i < 100 && !ws.sent.slice(cancel + 1).some((m) => m.type === "audio"); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(ws.sent.slice(cancel + 1).some((m) => m.type === "audio"), "the new utterance streams after the cancel");
  await page.waitForFunction(() => window.__voiceStats.counters.cancelledReceived > 0);
  assert.equal(await answer.locator(".interrupted").textContent(), "Interrupted.", "the answer spoken over is marked");

  // The interrupting question is answered in turn.
  s = await waitStats(page, () => window.__voiceStats.turns[1]?.doneReceived != null || window.__voiceStats.turns[1]?.cancelled != null);
  assert.match(s.turns[1].transcript ?? "", /balance/i, "the second question was heard");
  await shot(page, "voice-live-barge-in");

  // Switching off closes the socket once nothing is pending, and says so.
  await mic.click();
  await page.waitForFunction(() => document.getElementById("mic").getAttribute("aria-pressed") === "false");
  assert.equal(await page.locator("#voice-status").textContent(), "Live voice is off.");
  await page.waitForFunction(() => !window.__demo.voice.ws);
  for (let i = 0; i < 50 && !ws.closed; i++) await page.waitForTimeout(100);
  assert.ok(ws.closed, "the socket is closed");
  assert.deepEqual(errors, []);
  assert.deepEqual(consoleErrors, []);
  await page.close();
});

test("a stream ticket opens one socket, once", async () => {
  const { page, consoleErrors } = await openPage();
  const r = await page.evaluate(async () => {
    const { ticket, expires_at } = await window.__demo.streamTicket();
    const url = window.__demo.wsURL("/engine/stream");
    const open = () =>
      new Promise((resolve) => {
        const ws = new WebSocket(url, ["engine.v1", "ticket." + ticket]);
        let opened = false;
        ws.onopen = () => {
          opened = true;
          resolve({ opened: true, protocol: ws.protocol, ws });
        };
        ws.onerror = () => opened || resolve({ opened: false, event: "error" });
        ws.onclose = (e) => opened || resolve({ opened: false, event: "close", code: e.code });
        setTimeout(() => resolve({ opened: false, event: "timeout" }), 5000);
      });
    const first = await open();
    const second = await open();
    first.ws?.close();
    return { ticket, expires_at, first: { opened: first.opened, protocol: first.protocol }, second };
  });
  assert.deepEqual(r.first, { opened: true, protocol: "engine.v1" }, "the ticket opens a socket");
  assert.equal(r.second.opened, false, "the same ticket does not open a second one");
  assert.notEqual(r.second.event, "timeout", "the second socket failed at once");
  assert.match(r.ticket, /^st1_/);
  const ttl = Date.parse(r.expires_at) - Date.now();
  assert.ok(ttl > 0 && ttl <= 61_000, `the ticket expires in ${ttl} ms`);
  // The refusal, as any client sees it: 401 stream_ticket_reused.
  assert.deepEqual(await upgrade(r.ticket), { status: 401, code: "stream_ticket_reused" });
  assert.ok(consoleErrors.every((m) => /WebSocket/.test(m)), consoleErrors.join("\n"));
  await page.close();
});

test("when the ticket endpoint fails, the status line says so and the mic records instead", async () => {
  const { page } = await openPage();
  await page.route("**/engine/stream-ticket", (route) =>
    route.fulfill({ status: 503, contentType: "application/problem+json", body: JSON.stringify({ code: "store_unavailable", title: "Unavailable", detail: "down", retryable: true }) }),
  );
  const turn = page.waitForRequest((r) => r.url().endsWith("/engine") && r.postData()?.includes("audio_base64"));
  turn.catch(() => {});
  await page.locator("#mic").click();
  const status = page.locator("#voice-status");
  await page.waitForFunction(() => document.getElementById("voice-status").classList.contains("failed"));
  assert.match(await status.textContent(), /^Live voice could not start: the stream ticket was refused\. The assistant is having trouble right now/);
  assert.match(await status.textContent(), /records a whole message instead/);
  await page.waitForFunction(() => document.getElementById("mic").classList.contains("recording"));
  assert.equal(await page.locator("#mic").getAttribute("aria-pressed"), "true");
  await page.waitForTimeout(800);
  await shot(page, "voice-live-fallback");
  await page.locator("#mic").click();
  const body = JSON.parse((await turn).postData());
  assert.equal(body.mode, "voice", "the recording is posted as a voice turn");
  await lastAnswerDone(page);
  await page.unroute("**/engine/stream-ticket");
  await page.close();
});

// --- run -----------------------------------------------------------------------------------

await run(browser, outDir, {
  onFailure: (page) => page.evaluate(() => JSON.stringify(window.__voiceStats)).then((s) => console.log(`voice stats: ${s}`)),
});
