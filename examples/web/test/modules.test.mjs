// Tests of the client's modules that need no browser: the SSE parser, the WAV encoder and
// resampler. Run with: node --test modules.test.mjs

import { test } from "node:test";
import assert from "node:assert/strict";
import { createParser, readEvents } from "../static/sse.js";
import { resample, encodeWAV, normalize, base64 } from "../static/wav.js";
import { fixWAVSizes, b64url } from "../static/engine.js";

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
