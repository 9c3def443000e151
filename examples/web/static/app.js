// The reference web client: a conversation with the engine's demo tenant. It creates a
// device-bound session, runs turns as streamed events, draws the widgets, plays answers,
// confirms actions behind a passcode, holds live voice conversations over the voice socket
// (voice.js) and, without live voice, records whole voice messages.

import { DeviceNotEnrolledError, EngineClient, EngineError } from "./engine.js";
import { DemoBank, enrolmentPanel } from "./enrol.js";
import { Recorder, base64 } from "./wav.js";
import { renderWidget, renderCard, setHandoffStatus } from "./widgets.js";
import { strings, problemSentence } from "./text.js";
import { LiveVoice, LiveVoiceError, wsURL } from "./voice.js";
import { stats as voiceStats } from "./voice-stats.js";
import { voiceStrings } from "./voice-strings.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const engineKey = params.get("key") || "pk_demo";
// ?gate=passkey: a platform passkey, asked before each action, is the device check.
const gate = params.get("gate") === "passkey" ? "passkey" : "key";

const state = {
  locale: localStorage.getItem("engine-demo.locale") || "en",
  user: localStorage.getItem("engine-demo.user") || "demo-user",
  autospeak: localStorage.getItem("engine-demo.autospeak") === "1",
  // Live voice (the mic button holds a conversation over the voice socket) is on unless the
  // user turned it off: without it the mic button records a whole message and posts it.
  liveVoice: localStorage.getItem("engine-demo.live") !== "0",
  live: false, // live voice is on
  liveStarting: false,
  conversationId: "",
  history: [], // {role, content}, oldest first
  busy: false,
  recorder: null,
  audioURL: "",
  log: [], // {path, status} of every response, for the tests and the curious
  confirms: [], // confirm widgets received, newest last
  handoff: null, // the handoff to a person this page follows: {id, status, abort}
};

let client = newClient();
let turnAbort = null; // aborts the turn under way

function newClient() {
  return new EngineClient({
    engineKey,
    gate,
    userToken: state.user,
    onSession: (s) => {
      applyTheme(s.theme);
      keepTheme(s.theme);
      $("session-note").textContent = t("sessionReady");
    },
    onRequest: (r) => state.log.push(r),
  });
}

function t(key, ...args) {
  const table = strings[state.locale] ?? strings.en;
  const v = table[key] ?? strings.en[key];
  return typeof v === "function" ? v(...args) : v;
}

/** vt is t for the live voice's words (voice-strings.js). */
function vt(key, ...args) {
  const table = voiceStrings[state.locale] ?? voiceStrings.en;
  const v = table[key] ?? voiceStrings.en[key];
  return typeof v === "function" ? v(...args) : v;
}

// --- theme ---------------------------------------------------------------------------------

const COLOR = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

function luminance(hex) {
  let h = hex.slice(1);
  if (h.length === 3) h = [...h].map((c) => c + c).join("");
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** applyTheme dresses the page in the tenant's colours and name (create-session's theme). */
function applyTheme(theme = {}) {
  const root = document.documentElement.style;
  if (COLOR.test(theme.primary ?? "")) {
    root.setProperty("--primary", theme.primary);
    root.setProperty("--on-primary", luminance(theme.primary) > 0.45 ? "#111827" : "#ffffff");
  }
  if (COLOR.test(theme.background ?? "")) {
    root.setProperty("--background", theme.background);
    const dark = luminance(theme.background) < 0.2;
    document.documentElement.classList.toggle("dark", dark);
  }
  if (typeof theme.display_name === "string" && theme.display_name) {
    $("brand-name").textContent = theme.display_name;
    document.title = `${theme.display_name} · assistant`;
  }
}

// The tenant's theme is kept for the next visit, so that the page wears it before a session
// exists: while the device is enrolled, say, or its passkey created.
const THEME_ITEM = "engine-demo.theme:" + engineKey;

function keepTheme(theme) {
  try {
    localStorage.setItem(THEME_ITEM, JSON.stringify(theme ?? {}));
  } catch {
    // storage full or refused: the theme comes with the next session anyway
  }
}

function keptTheme() {
  try {
    const v = JSON.parse(localStorage.getItem(THEME_ITEM) ?? "{}");
    return v && typeof v === "object" ? v : {};
  } catch {
    return {};
  }
}

// --- page chrome ---------------------------------------------------------------------------

function applyLocale() {
  const rtl = state.locale === "ar";
  document.documentElement.lang = state.locale;
  document.documentElement.dir = rtl ? "rtl" : "ltr";
  $("locale").value = state.locale;
  $("text").placeholder = t("placeholder");
  $("passcode-title").textContent = t("passcodeTitle");
  document.querySelector('label[for="passcode"]').textContent = t("passcodeLabel");
  $("passcode-hint").textContent = t("passcodeHint");
  $("passcode-cancel").textContent = t("cancel");
  $("passcode-ok").textContent = t("confirm");
  const micText = state.recorder ? t("stopRecording")
    : state.live ? vt("stopLive")
    : state.liveVoice ? vt("startLive")
    : t("startRecording");
  $("mic-label").textContent = micText;
  $("mic").title = state.recorder || state.live ? micText : t("speak");
  $("live-voice-label").textContent = vt("liveVoice");
  document.querySelector('label.field:has(#gate) span').textContent = t("gate");
  $("gate").options[0].textContent = t("gateKey");
  $("gate").options[1].textContent = t("gatePasskey");
  $("more").title = $("more-label").textContent = t("moreSettings");
  $("send").title = $("send-label").textContent = t("send");
  document.querySelector('label.field:has(#locale) span').textContent = t("language");
  document.querySelector('label.field:has(#user) span').textContent = t("account");
  $("user").options[0].textContent = t("user1");
  $("user").options[1].textContent = t("user2");
  document.querySelector(".toggle span").textContent = t("speakAnswers");
}

function showBanner(text) {
  const b = $("banner");
  b.textContent = text;
  b.hidden = !text;
}

function setBusy(busy) {
  state.busy = busy;
  $("send").disabled = busy;
  $("text").setAttribute("aria-busy", String(busy));
  document.querySelectorAll(".chips button").forEach((b) => (b.disabled = busy));
}

/**
 * scrollToEnd scrolls the conversation to its end, but never past the top of the last turn:
 * an answer taller than the screen is read from its start.
 */
function scrollToEnd() {
  const el = $("conversation");
  const last = el.querySelector(".turn:last-child");
  const start = last ? el.scrollTop + last.getBoundingClientRect().top - el.getBoundingClientRect().top - 16 : el.scrollHeight;
  el.scrollTo({ top: Math.min(el.scrollHeight, start), behavior: matchMedia("(prefers-reduced-motion: reduce)").matches ? "auto" : "smooth" });
}

// --- turns ---------------------------------------------------------------------------------

/** newTurnView adds a turn to the conversation and returns its parts. */
function newTurnView(userText, { voice = false } = {}) {
  const node = $("turn-template").content.firstElementChild.cloneNode(true);
  const view = {
    node,
    user: node.querySelector(".bubble.user"),
    userText: node.querySelector(".user-text"),
    answer: node.querySelector(".answer"),
    status: node.querySelector(".status"),
    speak: node.querySelector(".speak"),
    widgets: node.querySelector(".widgets"),
    follow: node.querySelector(".follow"),
    chips: node.querySelector(".chips"),
    listen: node.querySelector(".listen"),
  };
  if (userText == null) view.user.remove();
  else view.userText.textContent = userText;
  if (voice) view.user.classList.add("voice");
  view.answer.lang = state.locale;
  view.listen.querySelector("span").textContent = t("listen");
  $("turns").append(node);
  scrollToEnd();
  return view;
}

/**
 * runTurn sends one turn and draws its events as they arrive. input is {transcript} or
 * {audio_base64}; label is what the user bubble shows.
 */
async function runTurn(input, { label, mode = "text", speakAfter = state.autospeak } = {}) {
  if (state.busy) return;
  setBusy(true);
  // A reset (another user) aborts the turn: nothing of it reaches the new user's page or history.
  const abort = new AbortController();
  turnAbort = abort;
  showBanner("");
  const view = newTurnView(mode === "home" ? null : label, { voice: mode === "voice" });
  const body = {
    mode,
    messages: state.history.slice(-20),
    context: { locale: state.locale },
    meta: { locale: state.locale, platform: "web", sdkVersion: "web-1" },
  };
  if (state.conversationId) body.context.sessionId = state.conversationId;
  Object.assign(body, input);

  let spec = null;
  let failed = null;
  try {
    for await (const { event, data } of client.turn(body, { signal: abort.signal })) {
      switch (event) {
        case "start":
          if (data.conversationId) state.conversationId = data.conversationId;
          if (typeof data.disclosure === "string") showDisclosure(view, data.disclosure);
          break;
        case "status":
          view.status.textContent = data.text || "";
          view.status.classList.add("visible");
          break;
        case "speak":
          view.status.classList.remove("visible");
          view.speak.append(document.createTextNode(data.delta ?? ""));
          break;
        case "widget":
          if (data.type === "confirm") state.confirms.push(data);
          if (data.type === "handoff") followHandoff(data.id);
          view.widgets.append(renderWidget(data, { onConfirm: confirmAction, t }));
          break;
        case "error":
          failed = new EngineError({ code: data.code, detail: data.message, retryable: data.retryable });
          break;
        case "done":
          spec = data;
          break;
      }
      scrollToEnd();
    }
  } catch (err) {
    failed = err;
  }
  if (abort.signal.aborted) return null;
  view.status.classList.remove("visible");
  view.answer.setAttribute("aria-busy", "false");

  if (spec) {
    finishTurn(view, spec, { userText: input.transcript ?? spec.meta?.transcript });
    // After an error event, done's speak is the apology in the turn's language: it says enough.
    if (failed && !spec.speak) view.answer.append(errorLine(failed));
    if (speakAfter || mode === "voice") playAnswer(view);
  } else {
    view.answer.classList.add("failed");
    // Without done, the answer is unfinished: none of it is drawn (a confirm widget above all).
    for (const part of [view.speak, view.widgets, view.follow, view.chips, view.listen.parentElement]) part.remove();
    view.answer.prepend(errorLine(failed ?? new EngineError({ code: "network" })));
    if (mode === "voice") view.userText.textContent = t("voiceUnheard");
  }
  setBusy(false);
  scrollToEnd();
  return spec;
}

/** showDisclosure shows the tenant's AI disclosure above a conversation's first answer. */
function showDisclosure(view, text) {
  const p = document.createElement("p");
  p.className = "disclosure";
  p.textContent = text;
  view.answer.prepend(p);
}

function errorLine(err) {
  const p = document.createElement("p");
  p.className = "error";
  p.setAttribute("role", "alert");
  p.textContent = problemSentence(err, state.locale);
  return p;
}

/** finishTurn draws the done spec: the whole speak text, direction, follow-up and chips. */
function finishTurn(view, spec, { userText }) {
  const meta = spec.meta ?? {};
  view.answer.dir = meta.direction === "rtl" ? "rtl" : "ltr";
  if (meta.locale) view.answer.lang = meta.locale;
  // The deltas add up to speak; rewriting the same text would make screen readers repeat it.
  if (view.speak.textContent !== (spec.speak ?? "")) view.speak.textContent = spec.speak ?? "";
  if (meta.transcript) view.userText.textContent = meta.transcript;
  else if (view.user.classList.contains("voice")) view.userText.textContent = t("voiceUnheard");
  if (meta.theme) applyTheme(meta.theme);
  // Widgets arrived as events already; draw the spec's when the stream carried none. A failed
  // turn's spec has none, and nothing drawn before the failure stays.
  if (meta.error) view.widgets.replaceChildren();
  if (!view.widgets.children.length) {
    for (const w of spec.widgets ?? []) view.widgets.append(renderWidget(w, { onConfirm: confirmAction, t }));
  }
  if (spec.follow) view.follow.textContent = spec.follow;
  else view.follow.remove();
  for (const s of spec.suggestions ?? []) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "chip";
    b.textContent = s;
    b.dir = "auto";
    b.addEventListener("click", () => send(s));
    view.chips.append(b);
  }
  if (!view.chips.children.length) view.chips.remove();
  if (spec.speak) {
    view.listen.hidden = false;
    view.listen.addEventListener("click", () => playAnswer(view));
  }
  if (userText) {
    state.history.push({ role: "user", content: userText });
  }
  if (spec.speak) state.history.push({ role: "assistant", content: spec.speak });
}

function send(text) {
  text = text.trim();
  if (!text || state.busy) return;
  if (state.handoff && state.handoff.status !== "ended") return sendToPerson(state.handoff, text);
  return runTurn({ transcript: text }, { label: text });
}

// --- a person of the bank ------------------------------------------------------------------

/**
 * followHandoff follows the handoff a turn started (its widget carries the id): the person's
 * messages are drawn as they are sent, the widget says where the handoff is, and the page
 * writes to the person until they give the conversation back.
 */
async function followHandoff(id) {
  if (!id || state.handoff?.id === id) return;
  state.handoff?.abort.abort();
  const h = { id, status: "queued", abort: new AbortController() };
  state.handoff = h;
  try {
    for await (const { event, data } of client.handoffEvents(id, { signal: h.abort.signal })) {
      if (event === "message") personMessage(data);
      if (event !== "handoff") continue;
      h.status = data.status === "released" || data.status === "failed" ? "ended" : data.status;
      const text = data.status === "queued" ? t("handoffQueued") : data.status === "connected" ? t("handoffConnected", data.agent || "") : data.speak;
      setHandoffStatus($("turns"), id, data.status, text);
      if (data.status !== "queued" && data.speak) handoffNote(data.speak);
    }
  } catch (err) {
    if (err.name !== "AbortError") showBanner(problemSentence(err, state.locale));
  }
  if (state.handoff === h) state.handoff = null;
}

/** personMessage draws a person's message, a render spec marked meta.from "person". */
function personMessage(spec) {
  const view = newTurnView(null);
  view.node.classList.add("from-person");
  const from = document.createElement("p");
  from.className = "person-name";
  from.textContent = t("personSaid", spec.meta?.name || "");
  view.answer.prepend(from);
  finishTurn(view, spec, {});
  view.answer.setAttribute("aria-busy", "false");
  view.node.dataset.shownAt = String(Date.now()); // the browser test measures the delay
  scrollToEnd();
}

/** handoffNote says, between the turns, that a person joined or gave the conversation back. */
function handoffNote(text) {
  const li = document.createElement("li");
  li.className = "turn handoff-note";
  li.setAttribute("role", "status");
  li.textContent = text;
  $("turns").append(li);
  scrollToEnd();
}

/** sendToPerson writes to the person holding the conversation; a turn when it has ended. */
async function sendToPerson(h, text) {
  const view = newTurnView(text);
  view.answer.remove();
  try {
    await client.handoffMessage(h.id, text);
    state.history.push({ role: "user", content: text });
  } catch (err) {
    if (err.status === 409 || err.status === 404) {
      view.node.remove();
      h.status = "ended";
      return runTurn({ transcript: text }, { label: text });
    }
    view.node.append(errorLine(err));
  }
}

// --- speech --------------------------------------------------------------------------------

/** play synthesizes text through POST /engine/tts and plays the WAV in the page's audio element. */
async function play(text, button) {
  if (!text) return;
  button?.setAttribute("aria-busy", "true");
  try {
    const blob = await client.tts(text);
    const audio = $("player");
    if (state.audioURL) URL.revokeObjectURL(state.audioURL);
    state.audioURL = URL.createObjectURL(blob);
    audio.dataset.type = blob.type;
    audio.dataset.bytes = String(blob.size);
    audio.src = state.audioURL;
    await audio.play().catch(() => {}); // a browser may refuse autoplay; Listen works anyway
  } catch (err) {
    showBanner(problemSentence(err, state.locale));
  } finally {
    button?.removeAttribute("aria-busy");
  }
}

function playAnswer(view) {
  return play(view.speak.textContent, view.listen);
}

// --- confirmed actions ---------------------------------------------------------------------

/**
 * askPasscode opens the device gate: a dialog asking for the device passcode. It resolves
 * true when the user entered four or more digits, false when cancelled.
 */
function askPasscode(what) {
  const dialog = $("passcode-dialog");
  const input = $("passcode");
  const error = $("passcode-error");
  $("passcode-what").textContent = what;
  input.value = "";
  error.hidden = true;
  return new Promise((resolve) => {
    const onSubmit = (e) => {
      if (!/^[0-9]{4,12}$/.test(input.value)) {
        e.preventDefault();
        error.textContent = t("passcodeInvalid");
        error.hidden = false;
        input.focus();
      }
    };
    const form = $("passcode-form");
    const onCancel = () => dialog.close("cancel");
    form.addEventListener("submit", onSubmit);
    $("passcode-cancel").addEventListener("click", onCancel);
    dialog.addEventListener("close", () => {
      form.removeEventListener("submit", onSubmit);
      $("passcode-cancel").removeEventListener("click", onCancel);
      const ok = dialog.returnValue === "ok" && /^[0-9]{4,12}$/.test(input.value);
      input.value = "";
      resolve(ok);
    }, { once: true });
    dialog.returnValue = "";
    dialog.showModal();
    input.focus();
  });
}

/**
 * confirmAction runs when the user taps a confirm widget's button. The widget is locked while
 * the gate and the call run, and for good once the action finished: a second tap cannot
 * execute twice (and the engine answers a repeated token with the first result anyway).
 */
async function confirmAction(widget, ui) {
  if (ui.state !== "ready") return;
  ui.lock("gate");
  // With a passkey, its own prompt (inside client.execute) is the device check.
  if (client.gate !== "passkey" && !(await askPasscode(widget.body || widget.title))) {
    ui.unlock();
    return;
  }
  ui.lock("running");
  const auth = { method: "passcode", verifiedAt: new Date().toISOString() };
  try {
    const res = await client.execute(widget.execute, auth, { locale: state.locale, sessionId: state.conversationId || undefined });
    ui.finish(renderCard(res.done, res.speak));
    if (state.autospeak && res.speak) play(res.speak);
    if (res.speak) state.history.push({ role: "assistant", content: res.speak });
  } catch (err) {
    // Retryable failures (the bank unreachable, the call still running) leave the token usable;
    // so does a device the bank does not know (yet): nothing ran, and it may be enrolled now.
    const unenrolled = err instanceof EngineError && err.code === "device_not_enrolled";
    const again = err instanceof EngineError && (err.retryable || unenrolled);
    ui.fail(problemSentence(err, state.locale), again);
    if (unenrolled) {
      const c = client;
      const enrolled = () => {
        $("enrolment").replaceChildren();
        $("session-note").textContent = t("sessionReady");
      };
      c.gatePublicKey().then((key) => c === client && offerEnrolment(key, { then: enrolled }), () => {});
    }
  }
  scrollToEnd();
}

// --- voice input ---------------------------------------------------------------------------

async function toggleRecording() {
  const mic = $("mic");
  if (state.recorder) {
    const rec = state.recorder;
    state.recorder = null;
    mic.setAttribute("aria-pressed", "false");
    mic.classList.remove("recording");
    mic.style.removeProperty("--level");
    applyLocale();
    const { wav, seconds } = await rec.stop();
    window.__demo.lastRecording = { bytes: wav.length, seconds, rate: 16000 };
    if (seconds < 0.3) {
      showBanner(t("tooShort"));
      return;
    }
    await runTurn({ audio_base64: base64(wav) }, { label: t("voicePending"), mode: "voice" });
    return;
  }
  if (state.busy) return;
  showBanner("");
  const rec = new Recorder({
    maxSeconds: 20, // a 20 s WAV in base64 stays well under the turn's 1 MiB body limit
    onLevel: (peak, secs) => {
      mic.style.setProperty("--level", Math.min(1, peak * 3).toFixed(2));
      if (secs >= 20 && state.recorder === rec) toggleRecording();
    },
  });
  try {
    await rec.start();
  } catch (err) {
    showBanner(err?.name === "NotAllowedError" ? t("micDenied") : t("micUnavailable"));
    return;
  }
  state.recorder = rec;
  mic.setAttribute("aria-pressed", "true");
  mic.classList.add("recording");
  applyLocale();
}

// --- live voice ----------------------------------------------------------------------------

/** setVoiceStatus writes the live voice's status line (a polite live region). */
function setVoiceStatus(text, { failed = false } = {}) {
  const el = $("voice-status");
  if (el.textContent !== text) el.textContent = text;
  el.classList.toggle("failed", failed);
}

const live = new LiveVoice({
  // A new ticket for every socket, asked with the headers, session and DPoP proof of every
  // request (client.post), so that the socket is this session's.
  mintTicket: async () => (await client.post("/engine/stream-ticket", {})).json(),
  url: () => wsURL("/engine/stream", client.base + "/"),
  context: () => {
    const c = { locale: state.locale };
    if (state.conversationId) c.sessionId = state.conversationId;
    return c;
  },
  handlers: {
    onState(s) {
      const mic = $("mic");
      mic.classList.toggle("hearing", s === "hearing");
      mic.classList.toggle("answering", s === "answering");
      if (s === "off") mic.style.removeProperty("--level");
      if (s === "off" && !state.live) return; // the caller says why
      setVoiceStatus(vt(s));
    },
    onLevel(peak) {
      $("mic").style.setProperty("--level", Math.min(1, peak * 3).toFixed(2));
    },
    onUtteranceEnd(turn) {
      turn.view = newTurnView(t("voicePending"), { voice: true });
      turn.view.status.textContent = "…";
      turn.view.status.classList.add("visible");
    },
    onTranscript(turn) {
      turn.view ??= newTurnView(turn.transcript, { voice: true });
      turn.view.userText.textContent = turn.transcript || t("voiceUnheard");
      if (turn.disclosure) showDisclosure(turn.view, turn.disclosure);
      scrollToEnd();
    },
    onSpeak(turn, delta) {
      const view = turn.view;
      if (!view) return;
      view.status.classList.remove("visible");
      view.speak.append(document.createTextNode(delta));
      scrollToEnd();
    },
    onSpec(turn, spec) {
      const view = turn.view;
      if (!view) return;
      view.status.classList.remove("visible");
      for (const w of spec.widgets ?? []) if (w?.type === "confirm") state.confirms.push(w);
      finishTurn(view, spec, { userText: turn.transcript ?? spec.meta?.transcript });
      if (turn.transcript) view.userText.textContent = turn.transcript;
      if (turn.error && !spec.speak) view.answer.append(errorLine(new EngineError({ code: turn.error.code, detail: turn.error.message })));
      view.answer.setAttribute("aria-busy", "false");
      scrollToEnd();
    },
    onDone(turn) {
      if (turn.view) endVoiceView(turn.view);
    },
    onCancelled(turn) {
      const view = turn.view;
      if (!view) return;
      if (!turn.spec) {
        for (const part of [view.widgets, view.follow, view.chips, view.listen.parentElement]) part.remove();
        if (!turn.transcript) view.userText.textContent = t("voiceUnheard");
        else state.history.push({ role: "user", content: turn.transcript });
        // What was said of the answer before it was stopped stays in the history too.
        if (view.speak.textContent) state.history.push({ role: "assistant", content: view.speak.textContent });
      }
      markInterrupted(view);
      endVoiceView(view);
    },
    onInterrupted(turn) {
      if (turn.view) markInterrupted(turn.view);
    },
    onTurnError(turn, err, final) {
      const view = turn.view;
      if (!final || !view) return; // after the transcript, the apology and the spec follow
      if (err.code === "no_speech") {
        // A cough or a door: nothing to show in the conversation.
        view.node.remove();
        setVoiceStatus(vt("noSpeech"));
        return;
      }
      view.answer.classList.add("failed");
      for (const part of [view.speak, view.widgets, view.follow, view.chips, view.listen.parentElement]) part.remove();
      view.answer.prepend(errorLine(new EngineError({ code: err.code, detail: err.message, retryable: err.retryable })));
      if (!turn.transcript) view.userText.textContent = t("voiceUnheard");
      endVoiceView(view);
    },
    onSocketError(err) {
      setVoiceStatus(problemSentence(new EngineError({ code: err.code, detail: err.message })), { failed: true });
    },
    onLost(info) {
      if (info.reconnect) {
        setVoiceStatus(vt("socketLost"), { failed: true });
        return;
      }
      liveOff();
      setVoiceStatus(vt(info.code === "audio_interrupted" ? "audioInterrupted" : "reconnectFailed"), { failed: true });
    },
  },
});

/** markInterrupted notes under an answer that the user spoke over it. */
function markInterrupted(view) {
  if (view.answer.querySelector(".interrupted")) return;
  const note = document.createElement("p");
  note.className = "interrupted";
  note.textContent = vt("interrupted");
  if (view.speak.isConnected) view.speak.after(note);
  else view.answer.append(note);
}

function endVoiceView(view) {
  view.status.classList.remove("visible");
  view.answer.setAttribute("aria-busy", "false");
  scrollToEnd();
}

/** liveOff shows the mic button as off. */
function liveOff() {
  state.live = false;
  const mic = $("mic");
  mic.setAttribute("aria-pressed", "false");
  mic.classList.remove("live", "hearing", "answering");
  mic.style.removeProperty("--level");
  applyLocale();
}

/**
 * startLive switches live voice on. When the ticket or the socket fails, the status line says
 * so and the mic falls back to recording a whole message, posted as before.
 */
async function startLive() {
  if (state.live || state.liveStarting) return;
  state.liveStarting = true;
  showBanner("");
  const mic = $("mic");
  mic.setAttribute("aria-busy", "true");
  try {
    await live.start();
  } catch (err) {
    if (err instanceof LiveVoiceError) {
      const why = err.kind === "ticket" ? vt("ticketFailed", problemSentence(err.cause ?? err)) : vt("socketFailed");
      setVoiceStatus(`${why} ${vt("fallback")}`, { failed: true });
      state.liveStarting = false;
      mic.removeAttribute("aria-busy");
      await toggleRecording();
      return;
    }
    setVoiceStatus("");
    showBanner(err?.name === "NotAllowedError" ? t("micDenied") : t("micUnavailable"));
    return;
  } finally {
    state.liveStarting = false;
    mic.removeAttribute("aria-busy");
  }
  state.live = true;
  mic.setAttribute("aria-pressed", "true");
  mic.classList.add("live");
  applyLocale();
}

function stopLive() {
  if (!state.live) return;
  live.stop();
  liveOff();
  setVoiceStatus(vt("off"));
}

/** onMic: the mic button switches live voice on and off, or records a message without it. */
function onMic() {
  if (state.recorder) return toggleRecording(); // the fallback's recording: stop and send
  if (state.live) return stopLive();
  if (state.liveVoice) return startLive();
  return toggleRecording();
}

// --- start ---------------------------------------------------------------------------------

// --- device enrolment ------------------------------------------------------------------------

/** bankName is how the enrolment names the bank: the tenant's display name when known. */
function bankName() {
  const name = keptTheme().display_name;
  return typeof name === "string" && name ? name : "Demo Bank";
}

/**
 * offerEnrolment shows the bank's enrolment for publicKey: the demo's stand-in for the bank's
 * own app, which calls the bank and never the engine. then runs once the bank enrolled it.
 */
function offerEnrolment(publicKey, { then }) {
  const c = client;
  $("session-note").textContent = t("enrolNeeded", bankName());
  const panel = enrolmentPanel({
    bank: new DemoBank({ userToken: state.user }),
    publicKey,
    bankName: bankName(),
    passkey: c.gate === "passkey",
    t,
    onEnrolled: () => (c === client ? then() : undefined),
  });
  $("enrolment").replaceChildren(panel);
  scrollToEnd();
}

/**
 * offerPasskey asks the user to create the passkey the page's passkey gate needs; why says
 * why the last try failed, when the user made it.
 */
function offerPasskey(why = "") {
  $("session-note").textContent = why || t("passkeyNeeded");
  const b = document.createElement("button");
  b.type = "button";
  b.className = "primary";
  b.id = "passkey-create";
  b.textContent = t("passkeyCreate");
  b.addEventListener("click", () => start({ userAsked: true }));
  $("enrolment").replaceChildren(b);
}

const IP_HOST = /^(?:\d{1,3}(?:\.\d{1,3}){3}|\[[0-9a-f:.]+\])$/i;

// --- start ---------------------------------------------------------------------------------

/**
 * start creates the session and runs the home turn. A device the tenant's bank has not
 * enrolled is offered the bank's enrolment instead of a failure; with the passkey gate, a
 * passkey not created (yet) is offered again, unless the user asked for it and it failed.
 */
async function start({ userAsked = false } = {}) {
  const note = $("session-note");
  note.textContent = t("connecting");
  $("enrolment").replaceChildren();
  if (client.gate === "passkey" && IP_HOST.test(location.host.replace(/:\d+$/, ""))) {
    const url = new URL(location.href);
    url.hostname = "localhost";
    note.textContent = t("passkeyNeedsName", url.href);
    return;
  }
  try {
    await client.createSession();
  } catch (err) {
    if (err instanceof DeviceNotEnrolledError && err.publicKey) {
      offerEnrolment(err.publicKey, { then: () => start() });
      return;
    }
    if (client.gate === "passkey" && err.code === "gate_failed") {
      // On load the browser may refuse a passkey the user did not ask for: no failure then.
      offerPasskey(userAsked ? problemSentence(err, state.locale) : "");
      return;
    }
    note.textContent = problemSentence(err, state.locale);
    return;
  }
  await runTurn({}, { mode: "home", speakAfter: false });
}

function reset() {
  turnAbort?.abort();
  setBusy(false);
  // The socket is the old user's: it closes with the rest.
  if (state.live) {
    live.close();
    liveOff();
    setVoiceStatus(vt("off"));
  }
  state.conversationId = "";
  state.history = [];
  state.handoff?.abort.abort();
  state.handoff = null;
  $("turns").replaceChildren();
  client = newClient();
  start();
}

function wire() {
  applyLocale();
  $("user").value = state.user;
  $("autospeak").checked = state.autospeak;
  $("live-voice").checked = state.liveVoice;
  $("gate").value = gate;
  applyTheme(keptTheme());
  $("composer").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("text");
    const text = input.value;
    if (!text.trim() || state.busy) return;
    input.value = "";
    send(text);
  });
  $("mic").addEventListener("click", onMic);
  $("live-voice").addEventListener("change", (e) => {
    state.liveVoice = e.target.checked;
    localStorage.setItem("engine-demo.live", state.liveVoice ? "1" : "0");
    if (!state.liveVoice) stopLive();
    applyLocale();
  });
  $("locale").addEventListener("change", (e) => {
    state.locale = e.target.value;
    localStorage.setItem("engine-demo.locale", state.locale);
    applyLocale();
  });
  $("user").addEventListener("change", (e) => {
    state.user = e.target.value;
    localStorage.setItem("engine-demo.user", state.user);
    reset();
  });
  $("gate").addEventListener("change", (e) => {
    // The gate is the page's address: a passkey page belongs at a domain name, which the
    // reference server sends a loopback address's passkey page to.
    const url = new URL(location.href);
    if (e.target.value === "passkey") url.searchParams.set("gate", "passkey");
    else url.searchParams.delete("gate");
    location.assign(url.href);
  });
  $("autospeak").addEventListener("change", (e) => {
    state.autospeak = e.target.checked;
    localStorage.setItem("engine-demo.autospeak", state.autospeak ? "1" : "0");
  });
  $("settings").addEventListener("submit", (e) => e.preventDefault());
  wireMenu();
}

/**
 * wireMenu opens and closes the phone's menu of preferences (the .more button; on a wider
 * screen the button is hidden and the preferences are in the row). A tap outside the settings
 * or Escape closes it.
 */
function wireMenu() {
  const more = $("more");
  const open = () => more.getAttribute("aria-expanded") === "true";
  const show = (on) => more.setAttribute("aria-expanded", on ? "true" : "false");
  more.addEventListener("click", () => show(!open()));
  document.addEventListener("click", (e) => {
    if (open() && !$("settings").contains(e.target)) show(false);
  });
  $("settings").addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || !open()) return;
    show(false);
    more.focus();
  });
}

// window.__demo is a small hook for the browser tests and for people exploring the protocol.
window.__demo = {
  state,
  get client() {
    return client;
  },
  send,
  /** corruptSession replaces the session token with one the engine will not know. */
  corruptSession() {
    if (client.session) client.session.token = client.session.token.slice(0, -6) + "AAAAAA";
  },
  lastRecording: null,
  /** voice is the live conversation (voice.js): its socket, turns and player. */
  voice: live,
  /** streamTicket mints a ticket for the voice socket, as live voice does for each socket. */
  async streamTicket() {
    return (await client.post("/engine/stream-ticket", {})).json();
  },
  /** wsURL returns the socket URL of a path of this engine. */
  wsURL: (path) => wsURL(path, client.base + "/"),
};
// window.__voiceStats: the live voice's times (performance.now()) and counters, for the tests.
window.__voiceStats = voiceStats;

wire();
start();
