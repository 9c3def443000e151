// The demo's stand-in for the bank's own app: device enrolment with a one-time code, through
// the demo bank's routes that the reference server serves at /demo/bank/. The engine takes no
// part in it: a bank enrols its customers' devices in its own app, and the engine only asks
// the bank, at create-session and before each proved action, whether a key is enrolled.

/** BankError is a refusal of the bank: its status, its error code and its own message. */
export class BankError extends Error {
  constructor({ status = 0, code = "bank_error", message = "" } = {}) {
    super(message || code);
    this.name = "BankError";
    this.status = status;
    this.code = code;
  }
}

/**
 * DemoBank calls the demo bank's enrolment routes for one user (X-Token). base is where the
 * reference server serves them: /demo/bank/ beside this page.
 */
export class DemoBank {
  constructor({ userToken, base = new URL("bank/", location.href).href }) {
    this.userToken = userToken;
    this.base = base.endsWith("/") ? base : base + "/";
  }

  /**
   * requestCode asks the bank to send the user a one-time code that enrols publicKey (a JWK).
   * It resolves with {sent, user, expires_in}: user is how the bank names the user where a
   * person reads it.
   */
  requestCode(publicKey) {
    return this.post("devices/code", { public_key: publicKey }, 202);
  }

  /** enrol enrols publicKey with the code the bank sent for it: {enrolled, thumbprint}. */
  enrol(code, publicKey) {
    return this.post("devices", { code, public_key: publicKey }, 201);
  }

  async post(path, body, want) {
    let resp;
    try {
      resp = await fetch(new URL(path, this.base), {
        method: "POST",
        headers: { "X-Token": this.userToken, "Content-Type": "application/json" },
        body: JSON.stringify(body),
        cache: "no-store",
      });
    } catch (err) {
      throw new BankError({ code: "network", message: "The bank could not be reached. Check your connection and try again." });
    }
    let doc = null;
    try {
      doc = await resp.json();
    } catch {
      // not JSON: the status tells enough
    }
    if (resp.status === want && doc) return doc;
    if (resp.status === 404 || resp.status === 405) {
      throw new BankError({ status: resp.status, code: "no_enrolment", message: "This server has no bank to enrol devices with." });
    }
    throw new BankError({
      status: resp.status,
      code: typeof doc?.error === "string" ? doc.error : `http_${resp.status}`,
      message: typeof doc?.message === "string" ? doc.message : "The bank refused. Try again.",
    });
  }
}

function el(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

/**
 * enrolmentPanel returns the bank's enrolment card: the user asks for a code, reads where it
 * was sent, types it, and the bank enrols publicKey. onEnrolled runs once it did. t is the
 * page's strings; bankName how the bank is called; passkey says that the key is a passkey's.
 */
export function enrolmentPanel({ bank, publicKey, bankName, passkey = false, t, onEnrolled }) {
  const title = el("h2", { id: "enrol-title", textContent: t("enrolTitle") });
  const intro = el("p", { className: "muted", textContent: t("enrolIntro", bankName, passkey) });
  const sendCode = el("button", { type: "button", className: "primary", id: "enrol-send", textContent: t("enrolSendCode") });
  const sent = el("p", { id: "enrol-sent", hidden: true });
  sent.setAttribute("role", "status");
  const input = el("input", { id: "enrol-code", name: "code", type: "text", inputMode: "numeric", autocomplete: "one-time-code", maxLength: 6, required: true, pattern: "[0-9]{6}" });
  input.setAttribute("dir", "ltr");
  const label = el("label", { htmlFor: "enrol-code", textContent: t("enrolCodeLabel") });
  const submit = el("button", { type: "submit", className: "primary", id: "enrol-submit", textContent: t("enrolSubmit") });
  const again = el("button", { type: "button", className: "secondary", id: "enrol-again", textContent: t("enrolNewCode") });
  const form = el("form", { className: "enrol-form", hidden: true }, label, el("div", { className: "enrol-row" }, input, submit, again));
  const error = el("p", { className: "error small", hidden: true });
  error.setAttribute("role", "alert");
  const panel = el("section", { className: "enrol" }, title, intro, sendCode, sent, form, error);
  panel.setAttribute("aria-labelledby", title.id);

  const fail = (err) => {
    error.textContent = err instanceof BankError ? err.message : String(err?.message ?? err);
    error.hidden = false;
  };
  const busy = (on) => {
    for (const b of [sendCode, submit, again]) b.disabled = on;
    panel.setAttribute("aria-busy", String(on));
  };
  const ask = async () => {
    busy(true);
    error.hidden = true;
    try {
      const r = await bank.requestCode(publicKey);
      sent.textContent = t("enrolCodeSent", bankName, r.user);
      sent.hidden = false;
      sendCode.hidden = true;
      form.hidden = false;
      input.value = "";
      input.focus();
    } catch (err) {
      fail(err);
    } finally {
      busy(false);
    }
  };
  sendCode.addEventListener("click", ask);
  again.addEventListener("click", ask);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const code = input.value.trim();
    if (!/^[0-9]{6}$/.test(code)) {
      fail(new BankError({ message: t("enrolCodeInvalid") }));
      input.focus();
      return;
    }
    busy(true);
    error.hidden = true;
    try {
      await bank.enrol(code, publicKey);
    } catch (err) {
      busy(false);
      fail(err);
      input.select();
      return;
    }
    busy(false);
    sent.textContent = t("enrolDone");
    form.hidden = true;
    await onEnrolled();
  });
  return panel;
}
