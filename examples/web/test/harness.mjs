// The set-up the browser test files share: their arguments, Chromium with a fake microphone,
// speech the engine synthesizes for that microphone, the page's answers, screenshots, and a
// runner that reports each test and exits 1 when one fails.

import { chromium } from "playwright-core";
import { mkdtemp, mkdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import assert from "node:assert/strict";

export const TIMEOUT = 20_000;

/**
 * args reads `node <file> <engine base URL> <screenshot folder> [extra…]`, or prints the usage
 * and exits 2.
 */
export function args(file, extra = "") {
  const [base, outDir, ...rest] = process.argv.slice(2);
  if (!base || !outDir) {
    console.error(`usage: node ${file} <engine base URL> <screenshot folder>${extra ? " " + extra : ""}`);
    process.exit(2);
  }
  return { base, outDir, demoURL: new URL("/demo/", base).href, rest };
}

// --- WAV -----------------------------------------------------------------------------------

/** fixWAVSizes sets a streamed WAV's unknown RIFF and data sizes to the bytes received. */
export function fixWAVSizes(buf) {
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  v.setUint32(4, buf.length - 8, true);
  for (let off = 12; off + 8 <= buf.length;) {
    const id = buf.subarray(off, off + 4).toString("latin1");
    const size = v.getUint32(off + 4, true);
    if (id === "data") {
      v.setUint32(off + 4, buf.length - off - 8, true);
      break;
    }
    off += 8 + size + (size % 2);
  }
  return buf;
}

/** pcmOf returns the sample rate and the PCM bytes of a 16-bit mono WAV. */
export function pcmOf(wav) {
  assert.equal(wav.subarray(0, 4).toString("latin1"), "RIFF");
  let rate = 0;
  for (let off = 12; off + 8 <= wav.length;) {
    const id = wav.subarray(off, off + 4).toString("latin1");
    const size = wav.readUInt32LE(off + 4);
    if (id === "fmt ") {
      assert.equal(wav.readUInt16LE(off + 10), 1, "mono");
      assert.equal(wav.readUInt16LE(off + 22), 16, "16-bit");
      rate = wav.readUInt32LE(off + 12);
    }
    if (id === "data") return { rate, pcm: wav.subarray(off + 8, off + 8 + Math.min(size, wav.length - off - 8)) };
    off += 8 + size + (size % 2);
  }
  throw new Error("the WAV has no data chunk");
}

/** wavOf returns a 16-bit mono WAV file of pcm at rate. */
export function wavOf(rate, pcm) {
  const h = Buffer.alloc(44);
  h.write("RIFF", 0, "latin1");
  h.writeUInt32LE(36 + pcm.length, 4);
  h.write("WAVEfmt ", 8, "latin1");
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(1, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28);
  h.writeUInt16LE(2, 32);
  h.writeUInt16LE(16, 34);
  h.write("data", 36, "latin1");
  h.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([h, pcm]);
}

/** noise returns seconds of white noise of RMS level db (dBFS) at rate, from a seeded generator. */
export function noise(seconds, db, seed = 1, rate = 16000) {
  const a = 10 ** (db / 20) * Math.sqrt(3);
  const out = new Float32Array(Math.round(seconds * rate));
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    out[i] = a * (2 * (seed / 2147483648) - 1);
  }
  return out;
}

/**
 * spokenQuestion asks the engine to say text and writes it as the fake microphone's WAV in
 * dir, said in voice (flite's kal16 unless told: what the recogniser hears depends on it), after
 * leadSeconds and followed by silenceSeconds of silence. With noiseDB, white noise at that level (dBFS)
 * runs under the whole file, as a real microphone's own noise does. It returns the file, the
 * speech's length and the file's length in seconds.
 */
export async function spokenQuestion(base, dir, text, { leadSeconds = 0, silenceSeconds = 0, noiseDB = null, requestID = "prod-web-test-voice", voice = "kal16" } = {}) {
  const resp = await fetch(new URL("/engine/tts", base), {
    method: "POST",
    headers: { "X-Engine-Key": "pk_demo", "X-Token": "demo-user", "X-Request-ID": requestID, "Content-Type": "application/json" },
    body: JSON.stringify({ text, voice }),
  });
  assert.equal(resp.status, 200, `POST /engine/tts for the spoken question in voice ${voice}: ${resp.status === 200 ? "" : await resp.text()}`);
  const { rate, pcm } = pcmOf(fixWAVSizes(Buffer.from(await resp.arrayBuffer())));
  const silence = Buffer.alloc(Math.round(rate * silenceSeconds) * 2);
  const lead = Buffer.alloc(Math.round(rate * leadSeconds) * 2);
  const all = Buffer.concat([lead, pcm, silence]);
  if (noiseDB != null) {
    const under = noise(all.length / 2 / rate, noiseDB, 7, rate);
    for (let i = 0; i < under.length; i++) {
      const v = all.readInt16LE(2 * i) + Math.round(under[i] * 32768);
      all.writeInt16LE(Math.max(-32768, Math.min(32767, v)), 2 * i);
    }
  }
  const file = path.join(dir, "question.wav");
  await writeFile(file, wavOf(rate, all));
  return { file, seconds: pcm.length / 2 / rate, loopSeconds: all.length / 2 / rate };
}

// --- the browser ---------------------------------------------------------------------------

/**
 * launch starts Debian's Chromium (CHROMIUM names another) with a fresh profile. With
 * microphone, an async function given a folder to write in, the pages have a fake microphone
 * that plays the file it returns ({file, loop}: once, or in a loop); the browser's microphone
 * is that object. close() closes the browser and removes the profile.
 */
export async function launch(outDir, { microphone } = {}) {
  await mkdir(outDir, { recursive: true });
  const profile = await mkdtemp(path.join(tmpdir(), "engine-web-chromium-"));
  const mic = microphone ? await microphone(profile) : undefined;
  const started = Date.now();
  const flags = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--autoplay-policy=no-user-gesture-required",
  ];
  if (mic) {
    flags.push(
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${mic.file}${mic.loop ? "" : "%noloop"}`,
    );
  }
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: flags,
    viewport: { width: 1100, height: 820 },
    deviceScaleFactor: 1,
    permissions: mic ? ["microphone"] : [],
    locale: "en-US",
  });
  context.setDefaultTimeout(TIMEOUT);
  return {
    context,
    microphone: mic,
    started,
    launchMs: Date.now() - started,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * startsFresh makes every page of the context start from the same settings (pages share
 * the profile's localStorage): only the locale, and any other given items.
 */
export async function startsFresh(page, locale = "en", items = {}) {
  await page.addInitScript(
    ([l, more]) => {
      localStorage.clear();
      localStorage.setItem("engine-demo.locale", l);
      for (const [k, v] of Object.entries(more)) localStorage.setItem(k, v);
    },
    [locale, items],
  );
}

// --- the page ------------------------------------------------------------------------------

export const lastAnswer = (page) => page.locator(".answer").last();

/** lastAnswerDone waits until every answer on the page is complete and returns the last. */
export async function lastAnswerDone(page) {
  await page.locator('.answer[aria-busy="false"]').last().waitFor();
  await page.waitForFunction(() => [...document.querySelectorAll(".answer")].every((a) => a.getAttribute("aria-busy") === "false"));
  return lastAnswer(page);
}

/** shot saves a screenshot of the page, scrolled to its last turn, as outDir/name.png. */
export async function shot(outDir, page, name) {
  await page.evaluate(() => {
    document.activeElement?.blur();
    const c = document.getElementById("conversation");
    c.scrollTo({ top: c.scrollHeight, behavior: "instant" });
  });
  await page.screenshot({ path: path.join(outDir, `${name}.png`) });
}

// --- the runner ----------------------------------------------------------------------------

/**
 * suite collects tests; run runs them in order (WEB_TEST_ONLY keeps those whose name
 * contains it), saves a screenshot of every page a failed test left open, prints the
 * measured lines and a summary, closes the browser and exits 1 when a test failed.
 * onFailure(page) prints what helps to read a failure.
 */
export function suite() {
  const tests = [];
  const measured = [];
  return {
    test: (name, fn) => tests.push({ name, fn }),
    measured,
    async run(browser, outDir, { onFailure } = {}) {
      let failures = 0;
      const only = process.env.WEB_TEST_ONLY;
      const chosen = tests.filter(({ name }) => !only || name.includes(only));
      for (const { name, fn } of chosen) {
        const t0 = Date.now();
        try {
          await fn();
          console.log(`ok   ${name} (${Date.now() - t0} ms)`);
        } catch (err) {
          failures++;
          console.log(`FAIL ${name} (${Date.now() - t0} ms)\n${err?.stack ?? err}`);
          for (const page of browser.context.pages()) {
            if (onFailure) await onFailure(page).catch(() => {});
            await page.screenshot({ path: path.join(outDir, `failed-${name.replace(/[^a-z0-9]+/gi, "-")}.png`) }).catch(() => {});
            await page.close().catch(() => {});
          }
        }
      }
      await browser.close();
      for (const m of measured) console.log(m);
      console.log(`${chosen.length - failures}/${chosen.length} passed; browser start ${browser.launchMs} ms, total ${Date.now() - browser.started} ms`);
      process.exit(failures ? 1 : 0);
    },
  };
}
