// A standard EventSource resumes a turn: the eventsource package (the WHATWG EventSource for
// Node.js), whose reconnection sends Last-Event-ID by itself, with a fetch that adds the
// engine's headers. Usage:
//
//	ENGINE_URL=<engine base URL> node --test eventsource.test.mjs
//
// The engine must serve the demo tenant and keep its turns. cmd/engine's
// TestEventSourceResumesATurn runs this file and checks that the resumes called no tool again.

import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { EventSource } from "eventsource";

const base = process.env.ENGINE_URL;
const headers = () => ({
  "X-Engine-Key": "pk_demo",
  "X-Token": "eventsource-user",
  "X-Request-ID": "prod-eventsource-" + randomUUID(),
});

// startTurn posts a turn and reads its stream up to the end of its first speak event, then
// drops the connection: what a client on a phone has when its network changes.
async function startTurn(text) {
  const ctrl = new AbortController();
  const resp = await fetch(base + "/engine", {
    method: "POST",
    headers: { ...headers(), "Content-Type": "application/json", Accept: "text/event-stream" },
    body: JSON.stringify({ transcript: text }),
    signal: ctrl.signal,
  });
  assert.equal(resp.status, 200);
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let received = "";
  while (!/event: speak\n[^]*?\n\n/.test(received)) {
    const { value, done } = await reader.read();
    assert.ok(!done, "the stream ended before its first speak event");
    received += decoder.decode(value, { stream: true });
  }
  ctrl.abort();
  const speak = /event: speak\n[^]*?\n\n/.exec(received);
  const had = received.slice(0, speak.index + speak[0].length);
  const start = JSON.parse(/data: (.*)/.exec(had)[1]);
  const ids = [...had.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
  assert.ok(ids.length >= 2, "the stream's events carry ids");
  return { turnID: start.turnId, lastID: ids[ids.length - 1] };
}

// cutAfter returns a response whose body is resp's first n events, then a network error, as a
// network change breaks a stream.
function cutAfter(resp, n) {
  const reader = resp.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const body = new ReadableStream({
    async pull(ctrl) {
      const { value, done } = await reader.read();
      if (done) return ctrl.close();
      text += decoder.decode(value, { stream: true });
      let end = -1;
      for (let i = 0; i < n; i++) {
        end = text.indexOf("\n\n", end + 1);
        if (end < 0) return;
      }
      reader.cancel();
      ctrl.enqueue(new TextEncoder().encode(text.slice(0, end + 2)));
      ctrl.error(new TypeError("network changed"));
    },
  });
  return new Response(body, { status: resp.status, headers: resp.headers });
}

test("an EventSource resumes a cut turn, reconnects by itself after a second cut, and stops at done", { timeout: 30_000 }, async () => {
  const { turnID, lastID } = await startTurn("what is my balance");
  const requests = [];
  const es = new EventSource(`${base}/engine/turns/${turnID}`, {
    fetch: async (url, init) => {
      // The first connection starts after the event the client has; reconnections carry the
      // EventSource's own Last-Event-ID.
      const h = { ...init.headers, ...headers() };
      if (requests.length === 0) h["Last-Event-ID"] = String(lastID);
      requests.push(h["Last-Event-ID"] ?? "");
      const resp = await fetch(url, { ...init, headers: h });
      return requests.length === 1 && resp.status === 200 ? cutAfter(resp, 1) : resp;
    },
  });
  const events = [];
  let stop;
  const closed = new Promise((resolve) => {
    for (const name of ["start", "status", "speak", "widget", "done"]) {
      es.addEventListener(name, (ev) => events.push({ id: Number(ev.lastEventId), name, data: ev.data }));
    }
    es.addEventListener("error", (ev) => {
      if (es.readyState === EventSource.CLOSED) resolve(ev);
    });
    stop = () => (es.close(), resolve({ code: "still open after 20 s" }));
  });
  // The package does not hold the process open while it waits to reconnect; this does, and
  // bounds the wait.
  const watchdog = setTimeout(() => stop(), 20_000);
  const end = await closed.finally(() => clearTimeout(watchdog));

  assert.equal(end.code, 204, "the EventSource stops when the engine says the turn is over");
  const ids = events.map((e) => e.id);
  assert.deepEqual(ids, ids.map((_, i) => lastID + 1 + i), `each event once, in order, after ${lastID}: ${ids}`);
  assert.equal(events.at(-1).name, "done");
  const done = JSON.parse(events.at(-1).data);
  assert.match(done.speak ?? "", /\$/, "the answer names the balance");
  // The first resume, the EventSource's reconnection after the cut with the id of the one event
  // it had, and its reconnection after done, answered 204.
  assert.deepEqual(requests, [String(lastID), String(lastID + 1), String(ids.at(-1))]);
  console.log(`resumed ${turnID} after event ${lastID}: ${events.length} events over ${requests.length} requests`);
});
