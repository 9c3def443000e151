// The engine's HTTP API for a browser: sessions bound to a device key (DPoP, RFC 9449), turns
// streamed as server-sent events, confirmed actions and speech. docs/sessions.md and
// docs/protocol.md describe the wire; this file follows them step by step.

import { readEvents } from "./sse.js";

const enc = new TextEncoder();

/** b64url encodes bytes (an ArrayBuffer or a typed array) as base64url without padding. */
export function b64url(bytes) {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes.buffer ?? bytes);
  let s = "";
  for (let i = 0; i < u8.length; i += 0x8000) {
    s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  }
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** fromB64url decodes base64url, padded or not, to bytes. */
export function fromB64url(s) {
  return Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
}

async function sha256(text) {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", enc.encode(text)));
}

function b64urlJSON(value) {
  return b64url(enc.encode(JSON.stringify(value)));
}

function randomID(bytes = 12) {
  return b64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

/** requestID returns a new X-Request-ID for the production environment. */
export function requestID() {
  return "prod-web-" + randomID(12);
}

/**
 * EngineError is a failed request: an RFC 9457 problem from the engine (status, code, detail,
 * retryable), an error event of a turn stream, or a network failure (code "network").
 */
export class EngineError extends Error {
  constructor({ status = 0, code = "internal", title = "", detail = "", retryable = false, retryAfter = 0 } = {}) {
    super(detail || title || code);
    this.name = "EngineError";
    this.status = status;
    this.code = code;
    this.title = title;
    this.detail = detail;
    this.retryable = retryable;
    this.retryAfter = retryAfter; // seconds, from Retry-After; 0 when absent
  }
}

/**
 * DeviceNotEnrolledError is create-session's 403 device_not_enrolled: the tenant's service does
 * not know the key that would prove this session's actions. publicKey is that key's public JWK
 * (kty, crv, x, y): enrol it with the service (its own app, a one-time code), then create the
 * session again. The engine relays no enrolment.
 */
export class DeviceNotEnrolledError extends EngineError {
  constructor(problem, publicKey) {
    super(problem);
    this.name = "DeviceNotEnrolledError";
    this.publicKey = publicKey;
  }
}

/** publicJWK keeps the members of a public EC key that a JWK needs, in RFC 7638 order. */
function publicJWK({ crv, kty, x, y }) {
  return { crv, kty, x, y };
}

async function problemOf(resp) {
  let p = {};
  try {
    p = await resp.json();
  } catch {
    // not a problem document: the status tells enough
  }
  return new EngineError({
    status: resp.status,
    code: typeof p.code === "string" ? p.code : `http_${resp.status}`,
    title: typeof p.title === "string" ? p.title : resp.statusText,
    detail: typeof p.detail === "string" ? p.detail : "",
    retryable: p.retryable === true,
    retryAfter: Math.max(0, Number.parseInt(resp.headers.get("Retry-After") ?? "", 10) || 0),
  });
}

// A broken turn is resumed within this long: a network that comes back (a tunnel, Wi-Fi to
// cellular) usually does in seconds, and the engine keeps the turn for minutes.
const RESUME_PATIENCE_MS = 20_000;
// A turn is resumed at most this many times in a row without an event.
const MAX_RESUMES = 5;

/** pause waits ms, or until the browser is back online when it is offline; an abort ends it. */
function pause(ms, signal) {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer);
      globalThis.removeEventListener?.("online", done);
      signal?.removeEventListener("abort", aborted);
      resolve();
    };
    const aborted = () => {
      done();
      reject(signal.reason ?? new DOMException("aborted", "AbortError"));
    };
    const timer = setTimeout(done, ms);
    if (globalThis.navigator?.onLine === false) globalThis.addEventListener?.("online", done);
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** idb runs one request on the object store of the device keys and resolves with its result. */
function idb(mode, request) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open("engine-device-keys", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("keys");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const db = open.result;
      const tx = db.transaction("keys", mode);
      const req = request(tx.objectStore("keys"));
      tx.oncomplete = () => {
        db.close();
        resolve(req.result);
      };
      tx.onerror = tx.onabort = () => {
        db.close();
        reject(tx.error);
      };
    };
  });
}

/**
 * DeviceKey is the device's ES256 key: a non-extractable WebCrypto private key that signs DPoP
 * proofs, and its public JWK.
 */
export class DeviceKey {
  /**
   * load returns the device key kept in IndexedDB under name, generating and keeping one
   * the first time. IndexedDB stores the CryptoKey itself, still non-extractable. Where
   * IndexedDB is unavailable (some private windows), the key lives as long as the page.
   */
  static async load(name = "device") {
    try {
      const kept = await idb("readonly", (store) => store.get(name));
      if (kept?.privateKey instanceof CryptoKey && kept.jwk?.kty === "EC") return new DeviceKey(kept.privateKey, kept.jwk);
    } catch {
      // no IndexedDB: a key for this page only
    }
    const key = await DeviceKey.generate();
    try {
      await idb("readwrite", (store) => store.put({ privateKey: key.privateKey, jwk: key.jwk }, name));
    } catch {
      // kept for this page only
    }
    return key;
  }

  /** generate returns a new key: ECDSA P-256, the private half not extractable. */
  static async generate() {
    const pair = await crypto.subtle.generateKey({ name: "ECDSA", namedCurve: "P-256" }, false, ["sign"]);
    const { kty, crv, x, y } = await crypto.subtle.exportKey("jwk", pair.publicKey);
    return new DeviceKey(pair.privateKey, { crv, kty, x, y });
  }

  constructor(privateKey, jwk) {
    this.privateKey = privateKey;
    this.jwk = jwk;
  }

  /**
   * proof signs a DPoP proof for one request. htu is the request's URL without query or
   * fragment; ath binds the proof to the session token. WebCrypto's ECDSA signature is
   * already r||s (IEEE P1363), 64 bytes, as JWS wants: no DER to convert.
   */
  async proof({ method, url, token, nonce }) {
    const u = new URL(url, location.href);
    const header = { typ: "dpop+jwt", alg: "ES256", jwk: this.jwk };
    const payload = {
      jti: randomID(16),
      htm: method.toUpperCase(),
      htu: u.origin + u.pathname,
      iat: Math.floor(Date.now() / 1000),
      ath: b64url(await crypto.subtle.digest("SHA-256", enc.encode(token))),
    };
    if (nonce) payload.nonce = nonce;
    return this.sign(header, payload);
  }

  /**
   * actionProof signs the device's proof of one confirmed action (auth.proof): the hash of its
   * action token and the device check as the execute request reports it. The engine refuses
   * any change of the action, since the token commits to its exact arguments.
   */
  async actionProof({ token, method, verifiedAt }) {
    const header = { typ: "action-proof+jwt", alg: "ES256" };
    const payload = {
      ath: b64url(await crypto.subtle.digest("SHA-256", enc.encode(token))),
      method,
      verifiedAt,
      iat: Math.floor(Date.now() / 1000),
    };
    return this.sign(header, payload);
  }

  /**
   * thumbprint is the key's RFC 7638 thumbprint: SHA-256 of its required members in
   * lexicographic order without white space, base64url. The engine names the device by it.
   */
  async thumbprint() {
    const { crv, kty, x, y } = this.jwk;
    return b64url(await sha256(JSON.stringify({ crv, kty, x, y })));
  }

  async sign(header, payload) {
    const input = b64urlJSON(header) + "." + b64urlJSON(payload);
    const sig = await crypto.subtle.sign({ name: "ECDSA", hash: "SHA-256" }, this.privateKey, enc.encode(input));
    return input + "." + b64url(sig);
  }
}

/**
 * Passkey is the gate of confirmed actions on the web: a passkey of the platform authenticator
 * (Touch ID, Windows Hello, an Android screen lock) that signs each action token with user
 * verification required. It is registered once for the device key (its registration's
 * challenge is derived from the key's thumbprint, so it serves no other device) and the
 * registration is kept beside the key: every later session of this key sends it again
 * without asking the user.
 */
export class Passkey {
  /** load returns the passkey registered for key, registering one the first time. */
  static async load(key) {
    const name = "passkey:" + (await key.thumbprint());
    try {
      const kept = await idb("readonly", (store) => store.get(name));
      // A registration kept without its public key (an older page's) is replaced: the key is
      // what a bank enrols.
      if (kept?.registration?.rawId && kept.publicKey?.kty === "EC") return new Passkey(kept.registration, kept.publicKey);
    } catch {
      // no IndexedDB: a passkey registration for this page only
    }
    const passkey = await Passkey.register(key);
    try {
      await idb("readwrite", (store) => store.put({ registration: passkey.registration, publicKey: passkey.publicKey }, name));
    } catch {
      // kept for this page only
    }
    return passkey;
  }

  /**
   * register creates the passkey: ES256, or RS256 for an authenticator that makes RSA keys only
   * (the engine verifies both), on this device's platform
   * authenticator, user verification required, no attestation. Its challenge and user handle
   * are SHA-256 of "convengine gate credential", a NUL byte and the device key's thumbprint,
   * as the engine checks at create-session. The relying party is this page's host.
   */
  static async register(key) {
    const challenge = await sha256("convengine gate credential\0" + (await key.thumbprint()));
    let cred;
    try {
      cred = await navigator.credentials.create({
        publicKey: {
          challenge,
          rp: { id: location.hostname, name: document.title || location.hostname },
          user: { id: challenge, name: "gate", displayName: "Confirms actions on this device" },
          // ES256 first, in order of preference: authenticators pick it. RS256 is listed
          // beside it, as WebAuthn's defaults are, for authenticators that make RSA keys
          // only (TPM-backed Windows Hello) and so that Chromium does not warn; the engine
          // verifies both.
          pubKeyCredParams: [{ type: "public-key", alg: -7 }, { type: "public-key", alg: -257 }],
          authenticatorSelection: { authenticatorAttachment: "platform", residentKey: "discouraged", userVerification: "required" },
          attestation: "none",
          timeout: 120_000,
        },
      });
    } catch (err) {
      throw new EngineError({ code: "gate_failed", detail: `no passkey was created (${err.name})` });
    }
    const r = cred.response;
    let publicKey = null;
    try {
      // The passkey's public key, SubjectPublicKeyInfo DER, as the JWK a bank enrols.
      const spki = r.getPublicKey?.();
      if (spki && r.getPublicKeyAlgorithm?.() === -257) {
        const imported = await crypto.subtle.importKey("spki", spki, { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" }, true, ["verify"]);
        const { kty, n, e } = await crypto.subtle.exportKey("jwk", imported);
        publicKey = { kty, n, e };
      } else if (spki) {
        const imported = await crypto.subtle.importKey("spki", spki, { name: "ECDSA", namedCurve: "P-256" }, true, ["verify"]);
        publicKey = publicJWK(await crypto.subtle.exportKey("jwk", imported));
      }
    } catch {
      // neither a P-256 nor an RSA key, or a browser without getPublicKey: the passkey
      // cannot be enrolled
    }
    return new Passkey({
      id: cred.id,
      rawId: b64url(cred.rawId),
      type: cred.type,
      response: {
        clientDataJSON: b64url(r.clientDataJSON),
        attestationObject: b64url(r.attestationObject),
        transports: r.getTransports?.() ?? [],
      },
      clientExtensionResults: cred.getClientExtensionResults?.() ?? {},
    }, publicKey);
  }

  constructor(registration, publicKey = null) {
    this.registration = registration; // the PublicKeyCredential's JSON: create-session's gate_credential
    this.publicKey = publicKey; // its public key as a JWK (kty, crv, x, y), or null when unknown
  }

  /**
   * assert asks the user to approve one action: the passkey signs SHA-256 of its action token
   * after the device verified the user. It returns execute's auth.webauthn. A refusal, a
   * failed verification or a missing passkey throws an EngineError with code gate_failed.
   */
  async assert(actionToken, { userVerification = "required" } = {}) {
    let cred;
    try {
      cred = await navigator.credentials.get({
        publicKey: {
          challenge: await sha256(actionToken),
          rpId: location.hostname,
          allowCredentials: [{ type: "public-key", id: fromB64url(this.registration.rawId) }],
          userVerification,
          timeout: 120_000,
        },
      });
    } catch (err) {
      // Nothing was sent: the same confirm may be tried again.
      throw new EngineError({ code: "gate_failed", detail: `the passkey did not approve the action (${err.name})`, retryable: true });
    }
    const r = cred.response;
    const assertion = {
      credentialId: b64url(cred.rawId),
      clientDataJSON: b64url(r.clientDataJSON),
      authenticatorData: b64url(r.authenticatorData),
      signature: b64url(r.signature),
    };
    if (r.userHandle) assertion.userHandle = b64url(r.userHandle);
    return assertion;
  }
}

/**
 * EngineClient talks to one engine for one end user. Every request carries X-Engine-Key,
 * X-Token and a new X-Request-ID; once a session exists, its token and a fresh DPoP proof.
 * On 401 use_dpop_nonce it retries once with the engine's nonce; on any other 401 of its
 * key-bound session (invalid_session, invalid_dpop_proof, ...) it creates a new session (same
 * device key) and retries once.
 *
 * gate chooses what proves a confirmed action: "key" (the device key signs auth.proof after
 * the app's own check) or "passkey" (a platform passkey with user verification signs
 * auth.webauthn; the passkey's prompt is the check).
 */
export class EngineClient {
  constructor({ base = location.origin, engineKey, userToken, gate = "key", onSession = () => {}, onRequest = () => {} }) {
    if (gate !== "key" && gate !== "passkey") throw new TypeError(`gate ${gate}: want "key" or "passkey"`);
    this.gate = gate;
    this.passkey = null;
    this.base = base.replace(/\/+$/, "");
    this.engineKey = engineKey;
    this.userToken = userToken;
    this.onSession = onSession; // called with each new session (its theme included)
    this.onRequest = onRequest; // called with {path, status} after each response
    this.key = null;
    this.session = null;
    this.nonce = "";
  }

  url(path) {
    return this.base + path;
  }

  headers(extra = {}) {
    return {
      "X-Engine-Key": this.engineKey,
      "X-Token": this.userToken,
      "X-Request-ID": requestID(),
      ...extra,
    };
  }

  /**
   * gatePublicKey returns the public JWK (kty, crv, x, y) of the key that proves this client's
   * actions, the one a tenant that requires device proofs must have enrolled: the device key
   * with the key gate, the passkey's public key with the passkey gate. Both are kept in
   * IndexedDB, so an enrolled device stays enrolled across reloads. With the passkey gate the
   * first call registers the passkey (the browser asks the user).
   */
  async gatePublicKey() {
    this.key ??= await DeviceKey.load();
    if (this.gate !== "passkey") return publicJWK(this.key.jwk);
    this.passkey ??= await Passkey.load(this.key);
    if (!this.passkey.publicKey) {
      throw new EngineError({ code: "gate_failed", detail: "this browser does not tell the passkey's public key, so no service can enrol it" });
    }
    return { ...this.passkey.publicKey };
  }

  /**
   * createSession creates a session bound to the device key, generating the key once; with
   * the passkey gate, the passkey registered for that key is the session's gate credential.
   * A tenant whose service has not enrolled the gate's key answers 403 device_not_enrolled,
   * thrown as a DeviceNotEnrolledError that names the key to enrol.
   */
  async createSession() {
    this.key ??= await DeviceKey.load();
    const body = { public_key: this.key.jwk, metadata: { app: "web", ua: navigator.userAgent.slice(0, 200) } };
    if (this.gate === "passkey") {
      this.passkey ??= await Passkey.load(this.key);
      body.gate_credential = this.passkey.registration;
    }
    const path = "/api/v1/create-session";
    let resp;
    try {
      resp = await fetch(this.url(path), {
        method: "POST",
        headers: this.headers({ "Content-Type": "application/json" }),
        body: JSON.stringify(body),
        cache: "no-store",
      });
    } catch (err) {
      throw new EngineError({ code: "network", detail: String(err) });
    }
    this.onRequest({ path, status: resp.status });
    this.saveNonce(resp);
    if (resp.status !== 201) {
      const problem = await problemOf(resp);
      if (problem.code === "device_not_enrolled") throw new DeviceNotEnrolledError(problem, await this.gatePublicKey().catch(() => null));
      throw problem;
    }
    const s = await resp.json();
    this.session = { id: s.session_id, token: s.session_token, expiresAt: s.expires_at, theme: s.theme || {} };
    this.onSession(this.session);
    return this.session;
  }

  saveNonce(resp) {
    const n = resp.headers.get("DPoP-Nonce");
    if (n) this.nonce = n;
  }

  /**
   * post sends a JSON body to path and returns the Response when it is a success. A 401 other
   * than use_dpop_nonce re-creates the session and retries once; a second one is thrown.
   */
  post(path, body, { accept = "application/json", signal } = {}) {
    return this.send("POST", path, { body, accept, signal });
  }

  /** send makes a request of the session, with its DPoP proof, under post's retry rules. */
  async send(method, path, { body, accept = "application/json", signal, headers: extra = {} } = {}) {
    if (!this.session) await this.createSession();
    let renewed = false;
    let nonceRetried = false;
    for (;;) {
      const headers = this.headers({ Accept: accept, ...extra });
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const url = this.url(path);
      const token = this.session.token;
      headers.Authorization = "DPoP " + token;
      headers.DPoP = await this.key.proof({ method, url, token, nonce: this.nonce });
      let resp;
      try {
        const init = { method, headers, signal, cache: "no-store" };
        if (body !== undefined) init.body = JSON.stringify(body);
        resp = await fetch(url, init);
      } catch (err) {
        if (err.name === "AbortError") throw err;
        throw new EngineError({ code: "network", detail: String(err) });
      }
      this.onRequest({ path, status: resp.status });
      this.saveNonce(resp);
      if (resp.ok) return resp;
      const problem = await problemOf(resp);
      if (problem.code === "use_dpop_nonce" && !nonceRetried && this.nonce) {
        nonceRetried = true;
        continue;
      }
      if (resp.status === 401 && !renewed) {
        renewed = true;
        await this.createSession();
        continue;
      }
      throw problem;
    }
  }

  /**
   * turn runs a turn and yields its events as {event, data} with data parsed, in stream
   * order: start, status, speak, widget, error, done. When the stream breaks before done (a
   * phone moving from Wi-Fi to cellular, the replica following the turn shutting down), the
   * turn goes on in the engine, and is resumed from the last event read (GET
   * /engine/turns/{turnId} with Last-Event-ID), through the balancer on any replica: no event
   * comes twice, and the tools are not called again. It is resumed again when a resume breaks
   * too, up to MAX_RESUMES times in a row without an event. A turn whose replica died ends
   * with error turn_lost (retryable), the apology and done.
   */
  async *turn(body, { signal, onComment } = {}) {
    let resp = await this.post("/engine", body, { accept: "text/event-stream", signal });
    let turnId = "";
    let lastId = "";
    let resumes = 0; // in a row, since the last event
    for (;;) {
      let done = false;
      try {
        for await (const ev of readEvents(resp, { onComment })) {
          let data = null;
          try {
            data = JSON.parse(ev.data);
          } catch {
            continue; // not JSON: not an event of this protocol
          }
          if (ev.id) {
            lastId = ev.id;
            resumes = 0;
          }
          if (ev.event === "start") turnId = data.turnId || "";
          if (ev.event === "done") done = true;
          yield { event: ev.event, data, id: ev.id };
        }
      } catch (err) {
        if (err.name === "AbortError") throw err;
        if (resumes >= MAX_RESUMES || !turnId) throw err instanceof EngineError ? err : new EngineError({ code: "network", detail: String(err) });
      }
      if (done) return;
      if (resumes >= MAX_RESUMES || !turnId || signal?.aborted) {
        throw new EngineError({ code: "incomplete_stream", detail: "the turn's stream ended before its done event" });
      }
      resumes++;
      resp = await this.resume(turnId, lastId, signal);
    }
  }

  /**
   * resume asks for a turn's events after lastId. While the network is down, or the engine
   * says to retry (429, 503, with Retry-After), it tries again for up to 20 s.
   */
  async resume(turnId, lastId, signal) {
    const headers = lastId ? { "Last-Event-ID": lastId } : {};
    const until = Date.now() + RESUME_PATIENCE_MS;
    for (let attempt = 0; ; attempt++) {
      let err;
      try {
        const resp = await this.send("GET", "/engine/turns/" + encodeURIComponent(turnId), { accept: "text/event-stream", signal, headers });
        if (resp.status === 200 && resp.body) return resp;
        // 204: the engine has nothing after lastId, yet this page has no done.
        err = new EngineError({ status: resp.status, code: "incomplete_stream", detail: "the turn's stream ended before its done event" });
      } catch (e) {
        err = e;
      }
      const again = err.code === "network" || err.status === 429 || err.status === 503;
      const wait = err.retryAfter ? err.retryAfter * 1000 : Math.min(500 * 2 ** attempt, 4000);
      if (err.name === "AbortError" || !again || Date.now() + wait > until) throw err;
      await pause(wait, signal);
    }
  }

  /**
   * execute runs a confirmed action: the confirm widget's execute object, after the device
   * gate. Tenants that require device proofs ask for one: with the key gate the device key
   * signs auth.proof; with the passkey gate the passkey's prompt is the gate, and its
   * assertion (auth.webauthn) is sent with the time it passed as verifiedAt.
   */
  async execute(execute, auth, context = {}, { userVerification } = {}) {
    if (!this.session) await this.createSession();
    if (this.gate === "passkey") {
      const webauthn = await this.passkey.assert(execute.token, { userVerification });
      auth = { ...auth, verifiedAt: new Date().toISOString(), webauthn };
    } else {
      auth = { ...auth, proof: await this.key.actionProof({ token: execute.token, method: auth.method, verifiedAt: auth.verifiedAt }) };
    }
    const resp = await this.post("/engine/execute", { execute, auth, context });
    return resp.json();
  }

  /**
   * handoffEvents follows a handoff to a person (GET /engine/handoff/{id}/events) and yields
   * its events as {event, data}: "handoff" {id, status, agent, speak} as its status moves
   * (queued, connected, then released or failed, the last), and "message", a render spec of
   * the person's marked meta.from "person". A stream that breaks is followed again from the
   * last event read (Last-Event-ID), a few times, until the handoff ends or signal aborts.
   */
  async *handoffEvents(id, { signal } = {}) {
    const path = "/engine/handoff/" + encodeURIComponent(id) + "/events";
    let lastId = "";
    for (let broken = 0; broken < 5; broken++) {
      const headers = lastId ? { "Last-Event-ID": lastId } : {};
      let over = false;
      try {
        const resp = await this.send("GET", path, { accept: "text/event-stream", signal, headers });
        for await (const ev of readEvents(resp)) {
          let data;
          try {
            data = JSON.parse(ev.data);
          } catch {
            continue;
          }
          if (ev.id) lastId = ev.id;
          if (ev.event === "handoff" && (data.status === "released" || data.status === "failed")) over = true;
          yield { event: ev.event, data };
        }
      } catch (err) {
        if (err.name === "AbortError" || err.status === 404 || err.status === 403) throw err;
      }
      if (over || signal?.aborted) return;
      await pause(Math.min(500 * 2 ** broken, 4000), signal);
    }
  }

  /** handoffMessage sends the customer's text to the person holding handoff id (202). */
  async handoffMessage(id, text) {
    await this.post("/engine/handoff/" + encodeURIComponent(id) + "/messages", { text });
  }

  /**
   * tts synthesizes text and returns a WAV Blob. The engine streams the WAV with unknown sizes
   * (0xFFFFFFFF); they are fixed here so that every player reads the whole file.
   */
  async tts(text, { voice, signal } = {}) {
    const body = { text };
    if (voice) body.voice = voice;
    const resp = await this.post("/engine/tts", body, { accept: "audio/wav", signal });
    const type = (resp.headers.get("Content-Type") || "").split(";")[0].trim();
    const bytes = new Uint8Array(await resp.arrayBuffer());
    return new Blob([fixWAVSizes(bytes)], { type: type || "audio/wav" });
  }
}

/** fixWAVSizes sets the RIFF and data chunk sizes of a streamed WAV to the bytes received. */
export function fixWAVSizes(bytes) {
  if (bytes.length < 12 || String.fromCharCode(...bytes.subarray(0, 4)) !== "RIFF") return bytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  view.setUint32(4, bytes.length - 8, true);
  let off = 12;
  while (off + 8 <= bytes.length) {
    const id = String.fromCharCode(...bytes.subarray(off, off + 4));
    const size = view.getUint32(off + 4, true);
    if (id === "data") {
      const have = bytes.length - off - 8;
      if (size === 0xffffffff || size > have) view.setUint32(off + 4, have - (have % 2), true);
      break;
    }
    off += 8 + size + (size % 2);
  }
  return bytes;
}
