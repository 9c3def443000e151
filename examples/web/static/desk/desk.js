// The demo's agent desk: a person of the bank, holding the desk key the engine printed on its
// console, sees the conversations waiting for a person with their summaries, picks one up,
// writes with the customer live and gives the conversation back to the assistant with a note.
// It talks to the desk's API next to this page (api/, docs/handoff.md); text from the engine
// and from customers is always set as text, never parsed as HTML.

import { readEvents } from "../sse.js";

const $ = (id) => document.getElementById(id);

const desk = {
  key: sessionStorage.getItem("engine-desk.key") || "",
  name: sessionStorage.getItem("engine-desk.name") || "Ana",
  poll: 0, // the queue's timer
  held: null, // the handoff this person holds: {id, abort}
};

const api = (path) => new URL("api/" + path, location.href).href;

class DeskError extends Error {
  constructor(status, detail) {
    super(detail || `the desk answered ${status}`);
    this.status = status;
  }
}

/** call makes a request of the desk's API with the desk key; a problem is thrown. */
async function call(method, path, body, { signal } = {}) {
  const init = { method, headers: { Authorization: "Bearer " + desk.key }, cache: "no-store", signal };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const resp = await fetch(api(path), init);
  if (!resp.ok) {
    let detail = "";
    try {
      detail = (await resp.json()).detail;
    } catch {
      // not a problem document
    }
    throw new DeskError(resp.status, detail);
  }
  return resp;
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text != null) e.textContent = text;
  return e;
}

function showError(id, err) {
  const p = $(id);
  p.textContent = err ? String(err.message || err) : "";
  p.hidden = !err;
}

// --- the queue -----------------------------------------------------------------------------

async function refreshQueue() {
  let open;
  try {
    open = await (await call("GET", "handoffs")).json();
  } catch (err) {
    if (err.status === 401) return signOut(err);
    return; // the next poll tries again
  }
  const waiting = $("waiting");
  const items = open.filter((h) => h.status === "queued" || h.id === desk.held?.id);
  $("queue-empty").hidden = items.length > 0;
  waiting.replaceChildren(...items.map(item));
}

/** item is a waiting conversation: why, the summary, and the button that picks it up. */
function item(h) {
  const li = el("li", "handoff-item");
  li.dataset.id = h.id;
  li.append(el("p", "reason", h.reason));
  li.append(el("p", "summary", h.summary));
  const since = new Date(h.created).toLocaleTimeString();
  li.append(el("p", "meta", `${h.channel} · ${h.locale} · waiting since ${since}`));
  const b = el("button", "primary pick", desk.held?.id === h.id ? "Yours" : "Pick up");
  b.type = "button";
  b.disabled = !!desk.held;
  b.addEventListener("click", () => pickUp(h));
  li.append(b);
  return li;
}

function startPolling() {
  clearInterval(desk.poll);
  refreshQueue();
  desk.poll = setInterval(refreshQueue, 1000);
}

// --- the conversation held -----------------------------------------------------------------

async function pickUp(h) {
  showError("chat-error", null);
  try {
    await call("POST", `handoffs/${encodeURIComponent(h.id)}/join`, { name: desk.name });
  } catch (err) {
    showError("chat-error", err);
    refreshQueue();
    return;
  }
  const held = { id: h.id, abort: new AbortController() };
  desk.held = held;
  $("chat").hidden = false;
  $("chat-title").textContent = `Conversation · ${h.reason}`;
  $("chat-summary").textContent = h.summary;
  $("messages").replaceChildren();
  $("reply-text").focus();
  refreshQueue();
  follow(held);
}

/** follow draws the handoff's events as they come: the customer's and the person's words. */
async function follow(held) {
  try {
    const resp = await call("GET", `handoffs/${encodeURIComponent(held.id)}/events`, undefined, { signal: held.abort.signal });
    for await (const ev of readEvents(resp)) {
      let e;
      try {
        e = JSON.parse(ev.data);
      } catch {
        continue;
      }
      draw(e);
      if (e.type === "handoff" && (e.status === "released" || e.status === "failed")) {
        done(held);
        return;
      }
    }
  } catch (err) {
    if (err.name !== "AbortError") showError("chat-error", err);
  }
}

function draw(e) {
  let li;
  if (e.type === "message") {
    li = el("li", e.from === "person" ? "from-person" : "from-user", e.text);
    li.dataset.from = e.from;
  } else {
    const said = { queued: "Waiting for a person", connected: `${e.agent || "A person"} joined`, released: "Released to the assistant", failed: "Ended" }[e.status] || e.status;
    li = el("li", "event", said);
  }
  li.dir = "auto";
  $("messages").append(li);
  li.scrollIntoView({ block: "nearest" });
}

function done(held) {
  if (desk.held !== held) return;
  held.abort.abort();
  desk.held = null;
  $("chat").hidden = true;
  refreshQueue();
}

async function reply(e) {
  e.preventDefault();
  const input = $("reply-text");
  const text = input.value.trim();
  if (!text || !desk.held) return;
  input.value = "";
  try {
    await call("POST", `handoffs/${encodeURIComponent(desk.held.id)}/messages`, { text });
  } catch (err) {
    showError("chat-error", err);
  }
}

async function release(e) {
  e.preventDefault();
  if (!desk.held) return;
  const note = $("release-note").value.trim();
  try {
    await call("POST", `handoffs/${encodeURIComponent(desk.held.id)}/release`, { note });
    $("release-note").value = "";
  } catch (err) {
    showError("chat-error", err);
  }
}

// --- signing in ----------------------------------------------------------------------------

async function signIn(e) {
  e?.preventDefault();
  desk.key = $("desk-key").value.trim() || desk.key;
  desk.name = $("agent-name").value.trim() || desk.name;
  try {
    await call("GET", "handoffs");
  } catch (err) {
    showError("login-error", err.status === 401 ? new Error("That is not the desk key.") : err);
    return;
  }
  sessionStorage.setItem("engine-desk.key", desk.key);
  sessionStorage.setItem("engine-desk.name", desk.name);
  showError("login-error", null);
  $("login").hidden = true;
  $("queue").hidden = false;
  $("desk-who").textContent = `Signed in as ${desk.name}`;
  startPolling();
}

function signOut(err) {
  clearInterval(desk.poll);
  desk.held?.abort.abort();
  desk.held = null;
  sessionStorage.removeItem("engine-desk.key");
  $("login").hidden = false;
  $("queue").hidden = true;
  $("chat").hidden = true;
  $("desk-who").textContent = "";
  showError("login-error", err);
}

$("login").addEventListener("submit", signIn);
$("reply").addEventListener("submit", reply);
$("release").addEventListener("submit", release);
$("agent-name").value = desk.name;
if (desk.key) {
  $("desk-key").value = desk.key;
  signIn();
}
