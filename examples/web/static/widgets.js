// Widgets of a render spec as semantic HTML: a stat is a labelled figure, a list a real list, a
// progress a <progress> with its value, a confirm a group with two buttons. Text from the engine
// is always set as text, never parsed as HTML.

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text != null && text !== "") e.textContent = text;
  return e;
}

let ids = 0;
const nextID = (prefix) => `${prefix}-${++ids}`;

function stat(w) {
  const s = el("section", "widget stat");
  const label = el("h3", "stat-label", w.label);
  label.id = nextID("stat");
  s.setAttribute("aria-labelledby", label.id);
  s.append(label, el("p", "stat-value", w.value));
  if (w.delta) {
    const d = el("p", "stat-delta");
    d.append(el("bdi", "", w.delta)); // its own direction, aligned with the card's
    const sign = String(w.delta).trim()[0];
    if (sign === "+") d.classList.add("up");
    if (sign === "-" || sign === "−") d.classList.add("down");
    s.append(d);
  }
  return s;
}

function list(w) {
  const s = el("section", "widget list");
  const title = el("h3", "list-title", w.title);
  title.id = nextID("list");
  s.setAttribute("aria-labelledby", title.id);
  const ul = el("ul");
  for (const item of w.items ?? []) {
    const li = el("li");
    const main = el("div", "item-main");
    main.append(el("span", "item-title", item.title));
    if (item.subtitle) main.append(el("span", "item-subtitle", item.subtitle));
    li.append(main);
    if (item.trailing) {
      const tr = el("span", "item-trailing", item.trailing);
      tr.dir = "ltr"; // amounts read left to right in every locale
      const sign = String(item.trailing).trim()[0];
      if (sign === "+") tr.classList.add("up");
      li.append(tr);
    }
    ul.append(li);
  }
  s.append(title, ul);
  return s;
}

function progress(w) {
  const s = el("section", "widget progress");
  const value = Math.max(0, Math.min(1, Number(w.value) || 0));
  const pct = Math.round(value * 100);
  const head = el("div", "progress-head");
  const label = el("h3", "progress-label", w.label);
  label.id = nextID("progress");
  head.append(label, el("span", "progress-pct", `${pct}%`));
  const bar = el("progress");
  bar.max = 1;
  bar.value = value;
  bar.setAttribute("aria-labelledby", label.id);
  bar.setAttribute("aria-valuetext", `${pct}%`);
  s.setAttribute("aria-labelledby", label.id);
  s.append(head, bar);
  return s;
}

/**
 * confirm draws an action to confirm. onConfirm(widget, ui) runs on the confirm button; ui
 * locks and unlocks the widget and replaces its buttons by the terminal card.
 */
function confirm(w, { onConfirm, t }) {
  const s = el("section", "widget confirm");
  s.setAttribute("role", "group");
  const title = el("h3", "confirm-title", w.title);
  title.id = nextID("confirm");
  s.setAttribute("aria-labelledby", title.id);
  const body = el("p", "confirm-body", w.body);
  const actions = el("div", "confirm-actions");
  const cancel = el("button", "secondary", w.cancelLabel || t("cancel"));
  const ok = el("button", "primary", w.confirmLabel || t("confirm"));
  cancel.type = ok.type = "button";
  const note = el("p", "confirm-note");
  note.setAttribute("role", "status");
  actions.append(cancel, ok);
  s.append(title, body, actions, note);
  let validity = "";
  if (w.expiresAt) {
    const exp = new Date(w.expiresAt);
    if (!Number.isNaN(exp.getTime())) {
      s.dataset.expiresAt = w.expiresAt;
      validity = t("expires", exp.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }));
    }
  }
  note.textContent = validity;

  const ui = {
    state: "ready",
    lock(state) {
      ui.state = state;
      s.dataset.state = state;
      ok.disabled = cancel.disabled = true;
      s.setAttribute("aria-busy", String(state === "running"));
      if (state === "running") note.textContent = t("sending");
    },
    unlock() {
      ui.state = "ready";
      s.dataset.state = "ready";
      ok.disabled = cancel.disabled = false;
      s.removeAttribute("aria-busy");
      note.textContent = validity;
      ok.focus();
    },
    finish(card) {
      ui.state = "done";
      s.dataset.state = "done";
      s.removeAttribute("aria-busy");
      note.remove();
      actions.replaceWith(card);
    },
    fail(sentence, retry) {
      s.removeAttribute("aria-busy");
      note.textContent = sentence;
      note.classList.add("error");
      if (retry) {
        ui.state = "ready";
        s.dataset.state = "ready";
        ok.disabled = cancel.disabled = false;
      } else {
        ui.state = "failed";
        s.dataset.state = "failed";
      }
    },
  };
  s.dataset.state = "ready";
  ok.addEventListener("click", () => onConfirm(w, ui));
  cancel.addEventListener("click", () => {
    if (ui.state !== "ready") return;
    ui.state = "cancelled";
    s.dataset.state = "cancelled";
    ok.disabled = cancel.disabled = true;
    note.textContent = t("cancelled");
  });
  return s;
}

/** renderCard draws the terminal card of an executed action: success, or error when declined. */
export function renderCard(done = {}, speak = "") {
  const ok = done.type === "success";
  const card = el("div", `card ${ok ? "success" : "declined"}`);
  card.setAttribute("role", "status");
  card.dataset.type = done.type || "error";
  const icon = el("span", "card-icon");
  icon.setAttribute("aria-hidden", "true");
  icon.textContent = ok ? "✓" : "!";
  const text = el("div", "card-text");
  text.append(el("strong", "card-title", done.title));
  if (done.line1) text.append(el("span", "card-line", done.line1));
  if (done.line2) text.append(el("span", "card-line muted", done.line2));
  card.append(icon, text);
  if (speak) card.title = speak;
  return card;
}

/** humanize writes a field or type name for people: "loan_offer" and "loanOffer" are "Loan offer". */
export function humanize(name) {
  const s = String(name).replace(/([a-z0-9])([A-Z])/g, "$1 $2").replace(/[_-]+/g, " ").trim().toLowerCase();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

const FALLBACK_DEPTH = 3;
const FALLBACK_FIELDS = 20;

/** fields appends the members of obj to a definition list, at most three levels deep. */
function fields(obj, depth) {
  const dl = el("dl", "fallback-fields");
  let n = 0;
  for (const [k, v] of Object.entries(obj)) {
    if (v == null || v === "") continue;
    if (n++ === FALLBACK_FIELDS) {
      dl.append(el("dd", "", "…"));
      break;
    }
    dl.append(el("dt", "", humanize(k)));
    const dd = el("dd");
    if (typeof v === "boolean") dd.textContent = v ? "Yes" : "No";
    else if (Array.isArray(v) && v.every((x) => typeof x !== "object")) dd.textContent = v.join(", ");
    else if (typeof v === "object") {
      if (depth + 1 >= FALLBACK_DEPTH) dd.textContent = "…";
      else for (const part of Array.isArray(v) ? v : [v]) dd.append(typeof part === "object" && part ? fields(part, depth + 1) : el("span", "", String(part)));
    } else dd.textContent = String(v);
    dl.append(dd);
  }
  return dl;
}

/**
 * fallback draws a widget of a type this page does not know (a host's own, such as a bank's
 * card) from its fields, its title or label first, rather than dropping it.
 */
function fallback(w) {
  const s = el("section", "widget unknown");
  s.dataset.type = String(w.type);
  const { type, title, label, ...rest } = w;
  const heading = el("h3", "", typeof title === "string" && title ? title : typeof label === "string" && label ? label : humanize(type));
  heading.id = nextID("widget");
  s.setAttribute("aria-labelledby", heading.id);
  if (typeof title === "string" && title && typeof label === "string" && label) rest.label = label;
  s.append(heading, fields(rest, 0));
  return s;
}

/**
 * handoff draws the widget of a conversation handed to a person: a status line the handoff's
 * stream keeps up to date (setHandoffStatus), found by the handoff's id.
 */
function handoff(w, { t }) {
  const s = el("section", "widget handoff");
  s.dataset.handoffId = String(w.id ?? "");
  s.dataset.status = String(w.status ?? "queued");
  const p = el("p", "handoff-status", t ? t("handoffQueued") : "");
  p.setAttribute("role", "status");
  s.append(p);
  return s;
}

/** setHandoffStatus shows a handoff's status, and text, on every widget of handoff id. */
export function setHandoffStatus(root, id, status, text) {
  for (const s of root.querySelectorAll(".widget.handoff")) {
    if (s.dataset.handoffId !== id) continue;
    s.dataset.status = status;
    s.querySelector(".handoff-status").textContent = text;
  }
}

/** renderWidget returns the element of one widget; an unknown type is drawn from its fields. */
export function renderWidget(w, opts) {
  switch (w?.type) {
    case "handoff":
      return handoff(w, opts ?? {});
    case "stat":
      return stat(w);
    case "list":
      return list(w);
    case "progress":
      return progress(w);
    case "confirm":
      return confirm(w, opts);
    default:
      return fallback(w ?? {});
  }
}
