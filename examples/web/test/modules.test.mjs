// Tests of the client's modules that need no browser: the SSE parser, the WAV encoder and
// resampler, the end-of-speech detector, and how live voice matches the socket's messages to
// its turns. Run with: node --test modules.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { createParser, readEvents } from "../static/sse.js";
import { resample, encodeWAV, normalize, base64 } from "../static/wav.js";
import { fixWAVSizes, b64url } from "../static/engine.js";
import { LiveVoice } from "../static/voice.js";
import { SpeechDetector } from "../static/speech-detector.js";
import { FRAME_SAMPLES } from "../static/pcm.js";

/** parse feeds chunks to a parser and returns the events and comments it reported. */
function parse(...chunks) {
  const events = [];
  const comments = [];
  const p = createParser({ onEvent: (e) => events.push(e), onComment: (c) => comments.push(c) });
  for (const c of chunks) p.feed(c);
  p.end();
  return { events, comments };
}

test("sse: the engine's framing", () => {
  const { events } = parse('id: 1\nevent: start\ndata: {"turnId":"t"}\n\nid: 2\nevent: speak\ndata: {"delta":"Hi"}\n\n');
  assert.deepEqual(events, [
    { event: "start", data: '{"turnId":"t"}', id: "1" },
    { event: "speak", data: '{"delta":"Hi"}', id: "2" },
  ]);
});

test("sse: line endings CRLF, CR and LF, also split across chunks", () => {
  const want = [{ event: "a", data: "1", id: "" }, { event: "b", data: "2", id: "" }, { event: "c", data: "3", id: "" }];
  assert.deepEqual(parse("event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\revent: c\ndata: 3\n\n").events, want);
  // A CRLF split between chunks is one line ending, not two (which would end the event early).
  assert.deepEqual(parse("event: a\r", "\ndata: 1\r", "\n\r", "\n").events, [want[0]]);
  // Every split of the whole stream gives the same events.
  const all = "event: a\r\ndata: 1\r\n\r\nevent: b\rdata: 2\r\revent: c\ndata: 3\n\n";
  for (let i = 0; i <= all.length; i++) {
    for (let j = i; j <= all.length; j += 3) {
      assert.deepEqual(parse(all.slice(0, i), all.slice(i, j), all.slice(j)).events, want, `split at ${i}, ${j}`);
    }
  }
});

test("sse: comments, multi-line data, spaces and unknown fields", () => {
  const { events, comments } = parse(": ping\n\ndata:first\ndata:  second\ndata\nfoo: bar\n\n");
  assert.deepEqual(comments, ["ping"]);
  assert.deepEqual(events, [{ event: "message", data: "first\n second\n", id: "" }]);
});

test("sse: no data, no event; an unterminated event is dropped", () => {
  assert.deepEqual(parse("event: x\n\nid: 7\n\n").events, []);
  assert.deepEqual(parse("data: 1\n\ndata: 2").events, [{ event: "message", data: "1", id: "" }]);
});

test("sse: a BOM only at the start; an id with NUL is ignored; ids persist", () => {
  const { events } = parse("\ufeffid: 5\ndata: a\n\nid: 6\0\ndata: \ufeffb\n\n");
  assert.deepEqual(events, [{ event: "message", data: "a", id: "5" }, { event: "message", data: "\ufeffb", id: "5" }]);
});

test("sse: readEvents decodes UTF-8 split inside a character", async () => {
  const bytes = new TextEncoder().encode('event: speak\ndata: {"delta":"مرحبا ✓"}\n\n');
  const body = new ReadableStream({
    start(c) {
      for (const b of bytes) c.enqueue(new Uint8Array([b])); // one byte at a time
      c.close();
    },
  });
  const got = [];
  for await (const ev of readEvents(new Response(body))) got.push(ev);
  assert.deepEqual(got, [{ event: "speak", data: '{"delta":"مرحبا ✓"}', id: "" }]);
});

test("wav: 16 kHz mono 16-bit header and samples", () => {
  const wav = encodeWAV(Float32Array.from([0, 0.5, -1, 1.5]));
  const v = new DataView(wav.buffer);
  const ascii = (o) => String.fromCharCode(...wav.subarray(o, o + 4));
  assert.deepEqual([ascii(0), ascii(8), ascii(12), ascii(36)], ["RIFF", "WAVE", "fmt ", "data"]);
  assert.equal(v.getUint32(4, true), 36 + 8);
  assert.deepEqual([v.getUint16(20, true), v.getUint16(22, true), v.getUint32(24, true), v.getUint16(34, true)], [1, 1, 16000, 16]);
  assert.deepEqual([0, 1, 2, 3].map((i) => v.getInt16(44 + 2 * i, true)), [0, 16383, -32768, 32767]);
});

test("wav: resampling keeps duration and a tone's pitch", () => {
  for (const from of [48000, 44100, 22050, 8000]) {
    const tone = Float32Array.from({ length: from }, (_, i) => Math.sin((2 * Math.PI * 440 * i) / from));
    const out = resample(tone, from);
    assert.ok(Math.abs(out.length - 16000) <= 1, `${from}: ${out.length} samples`);
    let crossings = 0;
    for (let i = 1; i < out.length; i++) if ((out[i - 1] < 0) !== (out[i] < 0)) crossings++;
    assert.ok(Math.abs(crossings - 880) <= 4, `${from}: ${crossings} zero crossings for 440 Hz`);
  }
});

test("wav: normalize evens the level without amplifying silence", () => {
  assert.equal(Math.max(...normalize(Float32Array.from([0.1, -0.05]))), 0.5);
  assert.ok(Math.abs(normalize(Float32Array.from([0.001]))[0] - 0.01) < 1e-6, "at most ten times louder");
  assert.deepEqual(normalize(new Float32Array(3)), new Float32Array(3));
});

test("wav: fixWAVSizes sets a streamed WAV's unknown sizes", () => {
  const wav = encodeWAV(new Float32Array(10));
  const v = new DataView(wav.buffer);
  v.setUint32(4, 0xffffffff, true);
  v.setUint32(40, 0xffffffff, true);
  fixWAVSizes(wav);
  assert.equal(v.getUint32(4, true), wav.length - 8);
  assert.equal(v.getUint32(40, true), 20);
});

test("base64 and base64url", () => {
  const bytes = Uint8Array.from([251, 255, 191, 0]);
  assert.equal(base64(bytes), Buffer.from(bytes).toString("base64"));
  assert.equal(b64url(bytes), Buffer.from(bytes).toString("base64url"));
  assert.equal(b64url(bytes.buffer), "-_-_AA");
});

// --- live voice --------------------------------------------------------------------------

/** noise returns a frame of white noise at about db dBFS, from a seeded generator. */
function noiseFrames(db, n, seed = 1) {
  const amp = 32768 * 10 ** (db / 20) * Math.sqrt(3);
  let x = seed;
  const frames = [];
  for (let f = 0; f < n; f++) {
    const frame = new Int16Array(FRAME_SAMPLES);
    for (let i = 0; i < frame.length; i++) {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      frame[i] = Math.round((x / 2 ** 31 - 0.5) * 2 * amp);
    }
    frames.push(frame);
  }
  return frames;
}

function toneFrames(hz, db, n) {
  const amp = 32768 * 10 ** (db / 20) * Math.SQRT2;
  const frames = [];
  for (let f = 0; f < n; f++) {
    const frame = new Int16Array(FRAME_SAMPLES);
    for (let i = 0; i < frame.length; i++) frame[i] = Math.round(amp * Math.sin((2 * Math.PI * hz * (f * FRAME_SAMPLES + i)) / 16000));
    frames.push(frame);
  }
  return frames;
}

test("voice: a microphone that starts with exact zeros does not make room noise speech", () => {
  const d = new SpeechDetector();
  const events = [];
  for (const f of [...Array.from({ length: 10 }, () => new Int16Array(FRAME_SAMPLES)), ...noiseFrames(-50, 200)]) {
    const ev = d.push(f);
    if (ev) events.push(ev);
  }
  assert.deepEqual(events, [], "4 s of steady noise after digital silence");
  const heard = toneFrames(200, -20, 15).map((f) => d.push(f));
  assert.ok(heard.includes("start"), "a voice over the noise still starts speech");
});

/** liveVoice returns a LiveVoice on a stub socket and player, and the log of its handlers. */
function liveVoice() {
  globalThis.WebSocket ??= { CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 };
  const log = [];
  const handlers = {};
  for (const name of ["onUtteranceEnd", "onTranscript", "onSpec", "onDone", "onCancelled", "onInterrupted", "onTurnError", "onSocketError", "onLost"]) {
    handlers[name] = (turn, ...rest) => log.push([name, turn?.label ?? turn?.code ?? "", ...rest.filter((r) => typeof r === "boolean")]);
  }
  const lv = new LiveVoice({ mintTicket: async () => ({}), url: () => "ws://engine.test", handlers });
  lv.live = true;
  lv.ws = { readyState: 1, sent: [], send(m) { this.sent.push(JSON.parse(m).type); }, close() {} };
  lv.player = {
    active: false,
    stopped: 0,
    sources: new Set(),
    play() { this.active = true; return 0; },
    stopAll() { this.stopped++; this.active = false; return { count: 1, done: Promise.resolve(0) }; },
  };
  const say = (label) => {
    lv.endUtterance();
    lv.turns.at(-1).label = label;
  };
  const hear = (msg) => lv.onMessage(JSON.stringify(msg));
  return { lv, log, say, hear };
}

const audio = { type: "audio", seq: 1, sampleRate: 16000, chunk: "AAAAAA==" };

test("voice: a cough refused while an answer is on its way ends the cough, and the answer lands on its question", () => {
  const { lv, log, say, hear } = liveVoice();
  say("balance");
  hear({ type: "transcript", text: "what is my balance", turnId: "a" });
  say("cough");
  hear({ type: "error", error: { code: "no_speech", message: "no speech", retryable: false } });
  hear({ type: "speak", delta: "You have $12." });
  hear(audio);
  hear({ type: "spec", spec: { speak: "You have $12." } });
  hear({ type: "done", turnId: "a" });
  assert.deepEqual(log.filter(([n]) => n !== "onUtteranceEnd"), [
    ["onTranscript", "balance"],
    ["onTurnError", "cough", true],
    ["onSpec", "balance"],
    ["onDone", "balance"],
  ]);
  assert.equal(lv.turns.length, 0);
});

test("voice: an answer's done that crosses a barge-in's cancel still finishes it", () => {
  const { lv, log, say, hear } = liveVoice();
  say("balance");
  hear({ type: "transcript", text: "what is my balance", turnId: "a" });
  hear(audio);
  lv.bargeIn();
  hear(audio); // sent before the engine read the cancel: dropped
  hear({ type: "spec", spec: { speak: "You have $12." } });
  hear({ type: "done", turnId: "a" });
  hear({ type: "cancelled" });
  assert.deepEqual(lv.ws.sent, ["end_of_speech", "cancel"]);
  assert.deepEqual(log.filter(([n]) => n === "onDone" || n === "onSpec"), [["onSpec", "balance"], ["onDone", "balance"]]);
  assert.equal(lv.turns.length, 0);
  assert.equal(lv.dropping, false);
});

test("voice: an answer the engine cancels stops playing", () => {
  const { lv, log, say, hear } = liveVoice();
  say("balance");
  hear({ type: "transcript", text: "what is my balance", turnId: "a" });
  hear(audio);
  assert.equal(lv.player.active, true);
  hear({ type: "cancelled", turnId: "a" });
  assert.equal(lv.player.stopped, 1, "its audio stopped");
  assert.deepEqual(log.at(-1), ["onCancelled", "balance"]);
});

test("voice: an utterance the engine refuses while it is spoken makes no turn", () => {
  const { lv, log, hear } = liveVoice();
  lv.utterance = true;
  hear({ type: "error", error: { code: "overloaded", message: "busy", retryable: true } });
  lv.endUtterance();
  assert.deepEqual(lv.ws.sent, ["end_of_speech"], "the engine is told the utterance ended");
  assert.equal(lv.turns.length, 0, "no turn waits for an answer that will not come");
  assert.deepEqual(log, [["onSocketError", "overloaded"]]);
});

test("voice: a transcriber's failure before the transcript ends the turn being heard", () => {
  const { lv, log, say, hear } = liveVoice();
  say("balance");
  hear({ type: "error", error: { code: "transcriber_unavailable", message: "down", retryable: true }, turnId: "x" });
  assert.deepEqual(log.at(-1), ["onTurnError", "balance", true]);
  assert.equal(lv.turns.length, 0);
});

test("voice: noise refused while the question before it is still being heard ends the noise, not the question", () => {
  const { lv, log, say, hear } = liveVoice();
  say("balance");
  say("noise");
  hear({ type: "error", error: { code: "no_speech", message: "no speech was found in the audio", retryable: false } });
  hear({ type: "transcript", text: "what is my balance", turnId: "a" });
  hear({ type: "spec", spec: { speak: "You have $12." } });
  hear({ type: "done", turnId: "a" });
  assert.deepEqual(log.filter(([n]) => n !== "onUtteranceEnd"), [
    ["onTurnError", "noise", true],
    ["onTranscript", "balance"],
    ["onSpec", "balance"],
    ["onDone", "balance"],
  ]);
  assert.equal(lv.turns.length, 0);
});

test("voice: the audio context rests once live voice is off, and a context the system stops ends live voice", () => {
  const { lv, log, hear, say } = liveVoice();
  let suspended = 0;
  lv.ctx = { state: "running", suspend: async () => suspended++ };
  say("balance");
  hear({ type: "transcript", text: "what is my balance", turnId: "a" });
  hear(audio);
  lv.ctx.state = "interrupted"; // a call on the phone
  lv.onAudioState();
  assert.equal(lv.player.stopped, 1, "its audio stopped");
  assert.equal(lv.live, false);
  assert.deepEqual(log.at(-1), ["onLost", "audio_interrupted"]);

  const quiet = liveVoice();
  quiet.lv.ctx = { state: "running", suspend: async () => suspended++ };
  quiet.lv.stop();
  assert.equal(suspended, 1, "switched off with nothing playing, the context is suspended");
  quiet.lv.ctx.state = "suspended";
  quiet.lv.onAudioState();
  assert.ok(!quiet.log.some(([n]) => n === "onLost"), "its own suspension is no loss");
});

test("voice: an utterance the uplink cannot carry is given up, not answered late", () => {
  const { lv, log } = liveVoice();
  lv.utterance = true;
  lv.ws.bufferedAmount = 1 << 20; // a megabyte of audio not sent yet
  lv.onFrame(new Int16Array(FRAME_SAMPLES));
  assert.deepEqual(lv.ws.sent, ["cancel"], "the engine drops what it has; no more audio goes");
  assert.equal(lv.utterance, false);
  assert.deepEqual(log.at(-1), ["onSocketError", "network_slow"]);
  lv.onFrame(new Int16Array(FRAME_SAMPLES));
  assert.deepEqual(lv.ws.sent, ["cancel"], "the rest of it is not sent");
});
