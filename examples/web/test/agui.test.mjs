// The engine's AG-UI endpoint with the official client, @ag-ui/client's HttpAgent: a balance
// turn streams its text, a transfer ends as an interrupt, the interrupt resolved with the
// device's (here basic, passcode) auth moves the money once, and a replay of that resume is
// RUN_ERROR action_replayed and moves nothing more. On pk_demo_proof, the tenant that requires
// device proofs, a device enrolled at the demo bank by one-time code signs the action's proof
// with WebCrypto in a DPoP-bound session: the money moves once, while a forged, tampered or
// missing proof, and a replay, are RUN_ERROR with the engine's code. Usage:
//
//	ENGINE_URL=<engine base URL> CODES_URL=<URL of the bank's codes> node --test agui.test.mjs
//
// The engine must serve the demo tenants (pk_demo, pk_demo_proof) at /engine/agui and the demo
// bank's enrolment at /demo/bank/, as cmd/engine does. CODES_URL?user=<label> answers the
// one-time code the bank sent that user (the reference server prints it on its console);
// without it the proof test is skipped. DESK_KEY is the demo desk's key (the reference server
// prints it): a person on the desk answers a run that asks for one; without it that test is
// skipped. cmd/engine's TestAGUIClient runs this file.

import { test } from "node:test";
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { HttpAgent } from "@ag-ui/client";

const base = process.env.ENGINE_URL ?? process.argv[2];
if (!base) throw new Error("set ENGINE_URL to the engine's base URL");
const codesURL = process.env.CODES_URL;
const deskKey = process.env.DESK_KEY; // the demo desk's, printed on the server's console

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

// desk calls the demo desk's API as the person holding its key.
async function desk(method, path, body) {
  const resp = await fetch(`${base}/demo/desk/api/${path}`, {
    method,
    headers: { Authorization: "Bearer " + deskKey, "Content-Type": "application/json" },
    body: body && JSON.stringify(body),
  });
  assert.ok(resp.ok, `${method} ${path}: ${resp.status}`);
  return resp.status === 204 ? null : resp.json();
}

test("a run that asks for a person stays open and carries the person's messages", { skip: !deskKey && "DESK_KEY is not set" }, async () => {
  const token = "agui-person-" + randomUUID();
  const thread = randomUUID();
  const a = agent(token, thread);
  say(a, "I want to talk to a person");
  const held = run(a); // open until the person gives the conversation back

  let id;
  for (let i = 0; i < 100 && !id; i++) {
    id = (await desk("GET", "handoffs")).find((h) => h.conversation_id === thread)?.id;
    if (!id) await new Promise((r) => setTimeout(r, 20));
  }
  assert.ok(id, "the desk shows the handoff");
  await desk("POST", `handoffs/${id}/join`, { name: "Ana" });
  await desk("POST", `handoffs/${id}/messages`, { text: "Hello, this is Ana. I see the double charge." });

  // Meanwhile the customer writes: another run of the thread, whose turn goes to the person.
  const b = agent(token, thread);
  say(b, "It was on Monday");
  const relayed = await run(b);
  assert.equal(relayed.finished?.outcome, "success");
  assert.match(b.messages.at(-1).content, /Ana/, "the relayed run says who has the message");

  await desk("POST", `handoffs/${id}/release`, { note: "Refund opened." });
  const r = await held;
  assert.equal(r.types.at(-1), "RUN_FINISHED", `the held run ended with ${JSON.stringify(r.events.at(-1))}`);
  const specs = r.events.filter((e) => e.type === "CUSTOM" && e.name === "spec").map((e) => e.value);
  const person = specs.find((s) => s.meta?.from === "person");
  assert.equal(person?.meta.name, "Ana", `the specs after the turn: ${JSON.stringify(specs)}`);
  assert.equal(person.speak, "Hello, this is Ana. I see the double charge.");
  const statuses = r.events.filter((e) => e.type === "CUSTOM" && e.name === "widget" && e.value.type === "handoff").map((e) => e.value.status);
  assert.deepEqual(statuses, ["queued", "connected", "released"]);
  // The client keeps the person's words as a message of the conversation, as it renders them.
  assert.ok(a.messages.some((m) => m.role === "assistant" && m.content === "Hello, this is Ana. I see the double charge."),
    `the agent's messages: ${JSON.stringify(a.messages.map((m) => m.content))}`);

  const c = agent(token, thread);
  say(c, "What's my balance?");
  const back = await run(c);
  assert.match(c.messages.at(-1).content, /\$1,234\.56/, "the assistant answers after the release");
  assert.equal(back.finished?.outcome, "success");
});

test("a transfer is an interrupt; resolved, it moves the money once; a replay is RUN_ERROR action_replayed", async () => {
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

  // A client that lost its state sends the same resume again: an interrupt is answered once,
  // and the action token runs once.
  const again = await run(agent(token, a.threadId), {
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: basicAuth() }],
  });
  assert.equal(again.types[0], "RUN_STARTED");
  assert.equal(again.failed?.code, "action_replayed", `the replay ended with ${JSON.stringify(again.events.at(-1))}`);
  assert.equal(again.events.find((e) => e.type === "CUSTOM" && e.name === "done"), undefined);
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

// A device: an ECDSA P-256 key in WebCrypto, which signs JWS as ES256 (WebCrypto's signature
// is already r||s, as JWS wants).
const enc = new TextEncoder();
const b64url = (bytes) => Buffer.from(bytes).toString("base64url");
const b64json = (v) => b64url(enc.encode(JSON.stringify(v)));
const ath = async (token) => b64url(await crypto.subtle.digest("SHA-256", enc.encode(token)));

async function newDevice() {
  const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
  const { crv, kty, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
  const jwk = { crv, kty, x, y };
  const sign = async (header, payload) => {
    const input = b64json(header) + "." + b64json(payload);
    const sig = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, pair.privateKey, enc.encode(input));
    return input + "." + b64url(sig);
  };
  return {
    jwk,
    // dpop signs the DPoP proof of one POST to url in the session of token (docs/sessions.md).
    dpop: async (url, token) => sign({ typ: "dpop+jwt", alg: "ES256", jwk },
      { jti: randomUUID(), htm: "POST", htu: url, iat: Math.floor(Date.now() / 1000), ath: await ath(token) }),
    // actionProof signs auth.proof of an action token (docs/actions.md, device proofs).
    actionProof: async (token, method, verifiedAt) => sign({ typ: "action-proof+jwt", alg: "ES256" },
      { ath: await ath(token), method, verifiedAt, iat: Math.floor(Date.now() / 1000) }),
  };
}

async function postJSON(url, headers, body) {
  const resp = await fetch(url, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(body) });
  return { status: resp.status, body: await resp.json().catch(() => null) };
}

// enrol enrols the device for the user at pk_demo_proof's bank, as docs/actions.md shows: the
// bank sends a one-time code for the key, and the code enrols it.
async function enrol(token, device) {
  const asked = await postJSON(base + "/demo/bank/devices/code", { "X-Token": token }, { public_key: device.jwk });
  assert.equal(asked.status, 202, `asking for a code: ${JSON.stringify(asked)}`);
  const resp = await fetch(codesURL + "?user=" + encodeURIComponent(asked.body.user));
  assert.equal(resp.status, 200, "no one-time code reached the test");
  const code = (await resp.text()).trim();
  const enrolled = await postJSON(base + "/demo/bank/devices", { "X-Token": token }, { code, public_key: device.jwk });
  assert.equal(enrolled.status, 201, `enrolling: ${JSON.stringify(enrolled)}`);
}

// proofSession creates a pk_demo_proof session bound to the device (its key also proves the
// session's actions) and returns a runner of HttpAgents in it: each run gets a new DPoP proof.
async function proofSession(token, device) {
  const created = await postJSON(base + "/api/v1/create-session",
    { "X-Engine-Key": "pk_demo_proof", "X-Token": token, "X-Request-ID": "prod-agui-" + randomUUID() }, { public_key: device.jwk });
  assert.equal(created.status, 201, `create-session: ${JSON.stringify(created)}`);
  const session = created.body.session_token;
  const url = base + "/engine/agui";
  return async (a, params) => {
    a.headers = {
      "X-Engine-Key": "pk_demo_proof", "X-Token": token, "X-Request-ID": "prod-agui-" + randomUUID(),
      Authorization: "DPoP " + session, DPoP: await device.dpop(url, session),
    };
    return run(a, params);
  };
}

test("pk_demo_proof: a proof of the enrolled device moves the money once; forged, tampered, missing and replayed are RUN_ERROR", { skip: !codesURL && "CODES_URL is not set" }, async () => {
  const token = "agui-proof-" + randomUUID();
  const device = await newDevice();
  await enrol(token, device);
  const inSession = await proofSession(token, device);
  const agentOf = (threadId) => new HttpAgent({ url: base + "/engine/agui", threadId });
  const balanceNow = async () => {
    const a = agentOf();
    say(a, "What's my balance?");
    const r = await inSession(a);
    const m = /\$([\d,]+\.\d\d)/.exec(r.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join(""));
    assert.ok(m, `no amount in ${r.types}`);
    return m[1];
  };
  const before = await balanceNow();

  const a = agentOf();
  say(a, "send 20 dollars to Alex");
  const r = await inSession(a);
  assert.equal(r.finished?.outcome, "interrupt", `the run ended with ${JSON.stringify(r.events.at(-1))}`);
  const interrupt = a.pendingInterrupts[0];
  const actionToken = interrupt.metadata.widget.execute.token;
  const verifiedAt = new Date().toISOString(); // milliseconds, as JavaScript writes them
  const resume = async (auth) => inSession(agentOf(a.threadId), {
    resume: [{ interruptId: interrupt.id, status: "resolved", payload: { auth: { method: "faceid", verifiedAt, ...auth } } }],
  });

  const stranger = await newDevice(); // never enrolled, not the session's
  const good = await device.actionProof(actionToken, "faceid", verifiedAt);
  const sig = Buffer.from(good.split(".")[2], "base64url");
  sig[10] ^= 1;
  const tampered = good.split(".").slice(0, 2).join(".") + "." + b64url(sig);
  for (const [name, auth, code] of [
    ["a proof signed by a key that is not enrolled", { proof: await stranger.actionProof(actionToken, "faceid", verifiedAt) }, "invalid_device_proof"],
    ["a tampered signature", { proof: tampered }, "invalid_device_proof"],
    ["no proof", {}, "device_proof_required"],
  ]) {
    const refused = await resume(auth);
    assert.equal(refused.failed?.code, code, `${name}: the run ended with ${JSON.stringify(refused.events.at(-1))}`);
    assert.equal(await balanceNow(), before, `${name} moved money`);
  }

  const resumed = await resume({ proof: good });
  assert.equal(resumed.failed, undefined, `the proved resume failed: ${JSON.stringify(resumed.failed)}`);
  assert.equal(resumed.finished?.outcome, "success");
  assert.equal(resumed.events.find((e) => e.type === "CUSTOM" && e.name === "done")?.value.title, "Money sent");
  const after = await balanceNow();
  const cents = (s) => Math.round(Number(s.replace(/,/g, "")) * 100);
  assert.equal(cents(before) - cents(after), 2000, `the balance went from ${before} to ${after}`);

  const again = await resume({ proof: good });
  assert.equal(again.failed?.code, "action_replayed", `the replay ended with ${JSON.stringify(again.events.at(-1))}`);
  assert.equal(await balanceNow(), after, "the replayed resume moved money again");
});
