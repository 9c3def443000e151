// The engine's AG-UI endpoint with the official client, @ag-ui/client's HttpAgent: a balance
// turn streams its text, a transfer ends as an interrupt, the interrupt resolved with the
// device's (here basic, passcode) auth moves the money once, and a replay of that resume moves
// nothing more. Usage:
//
//	ENGINE_URL=<engine base URL> node --test agui.test.mjs
//
// The engine must serve the demo tenant (pk_demo) at /engine/agui, as cmd/engine does;
// cmd/engine's TestAGUIClient runs this file.

import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";

const base = process.env.ENGINE_URL ?? process.argv[2];
if (!base) throw new Error("set ENGINE_URL to the engine's base URL");

// agent makes an HttpAgent for the user with token, on thread (a new one when omitted).
function agent(token, threadId) {
  return new HttpAgent({
    url: base + "/engine/agui",
    threadId,
    headers: { "X-Engine-Key": "pk_demo", "X-Token": token, "X-Request-ID": "prod-agui-" + randomUUID() },
  });
}

// run runs the agent and returns the events it received and how the run ended.
async function run(a, params = {}) {
  const events = [];
  let finished, failed;
  await a.runAgent(params, {
    onEvent: ({ event }) => { events.push(event); },
    onRunFinishedEvent: (p) => { finished = p; },
    onRunErrorEvent: ({ event }) => { failed = event; },
  }).catch((err) => { if (!failed) throw err; });
  return { events, types: events.map((e) => e.type), finished, failed };
}

function say(a, text) {
  a.addMessage({ id: randomUUID(), role: "user", content: text });
}

// balance asks for the balance and returns it, as the text says it.
async function balance(token) {
  const a = agent(token);
  say(a, "What's my balance?");
  const r = await run(a);
  const text = r.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  const m = /\$([\d,]+\.\d\d)/.exec(text);
  assert.ok(m, `no amount in ${JSON.stringify(text)}`);
  return m[1];
}

const basicAuth = () => ({ auth: { method: "passcode", verifiedAt: new Date().toISOString() } });

test("a balance turn streams text messages and finishes", async () => {
  const a = agent("agui-balance-" + randomUUID());
  say(a, "What's my balance?");
  const r = await run(a);
  assert.equal(r.types[0], "RUN_STARTED");
  for (const t of ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"]) {
    assert.ok(r.types.includes(t), `no ${t} in ${r.types}`);
  }
  assert.equal(r.types.at(-1), "RUN_FINISHED");
  assert.equal(r.finished.outcome, "success");
  const reply = a.messages.at(-1);
  assert.equal(reply.role, "assistant");
  assert.match(reply.content, /\$1,234\.56/);
});

test("a transfer is an interrupt; resolved, it moves the money once; a replay moves nothing", async () => {
  const token = "agui-transfer-" + randomUUID();
  const before = await balance(token);

  const a = agent(token);
  say(a, "send 20 dollars to Alex");
  const r = await run(a);
  assert.equal(r.finished?.outcome, "interrupt", `the run ended with ${r.types.at(-1)}`);
  assert.equal(a.pendingInterrupts.length, 1);
  const interrupt = a.pendingInterrupts[0];
  assert.equal(interrupt.reason, "confirmation_required");
  assert.equal(interrupt.metadata.widget.type, "confirm");
  assert.equal(await balance(token), before, "money moved before the confirmation");

  const resumed = await run(a, { resume: [{ interruptId: interrupt.id, status: "resolved", payload: basicAuth() }] });
  assert.equal(resumed.failed, undefined, `the resume failed: ${JSON.stringify(resumed.failed)}`);
  assert.equal(resumed.finished?.outcome, "success");
  const done = resumed.events.find((e) => e.type === "CUSTOM" && e.name === "done");
  assert.equal(done?.value.title, "Money sent");
  assert.match(a.messages.at(-1).content, /sent \$20\.00 to Alex/);
  assert.equal(a.pendingInterrupts.length, 0);
  const after = await balance(token);
  assert.notEqual(after, before, "the resume moved no money");

  // A client that lost its state sends the same resume again: the action token runs once.
  const again = await run(agent(token, a.threadId), {
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: basicAuth() }],
  });
  assert.equal(again.types[0], "RUN_STARTED");
  assert.equal(await balance(token), after, "the replayed resume moved money again");
});

test("a cancelled interrupt runs nothing", async () => {
  const token = "agui-cancel-" + randomUUID();
  const before = await balance(token);
  const a = agent(token);
  say(a, "send 20 dollars to Alex");
  const r = await run(a);
  assert.equal(r.finished?.outcome, "interrupt");
  const cancelled = await run(a, { resume: [{ interruptId: a.pendingInterrupts[0].id, status: "cancelled" }] });
  assert.deepEqual(cancelled.types, ["RUN_STARTED", "RUN_FINISHED"]);
  assert.equal(await balance(token), before);
});

test("a forged interrupt is refused with the engine's code", async () => {
  const token = "agui-forged-" + randomUUID();
  const a = agent(token);
  say(a, "send 20 dollars to Alex");
  await run(a);
  const id = a.pendingInterrupts[0].id;
  const x = JSON.parse(Buffer.from(id.slice("confirm.".length), "base64url"));
  x.arguments.amount = 2000;
  const forged = "confirm." + Buffer.from(JSON.stringify(x)).toString("base64url");
  const r = await run(agent(token, a.threadId), { resume: [{ interruptId: forged, status: "resolved", payload: basicAuth() }] });
  assert.equal(r.failed?.code, "invalid_action_token", `the run ended with ${JSON.stringify(r.events.at(-1))}`);
});
