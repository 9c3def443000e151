// Live voice over the engine's socket (docs/voice.md, "The voice socket"). The microphone goes
// up in 20 ms frames of 16 kHz PCM while the user speaks; the page itself decides where an
// utterance ends and says so (end_of_speech); the answer comes down as text deltas and audio,
// sentence by sentence, and plays as it arrives; speaking over the answer stops it at once
// (barge-in). Typed turns stay on POST /engine.
//
// The socket is opened with a stream ticket, since a browser cannot set the upgrade's headers:
// the page asks POST /engine/stream-ticket with the headers (session, DPoP proof) of every
// request, then offers the subprotocols engine.v1 and ticket.<ticket>. A ticket opens one socket
// once, within a minute: every socket gets a new one.
//
// Its parts: pcm.js (frames), speech-detector.js (end of speech), audio-io.js (microphone and
// speaker), voice-strings.js (words), voice-stats.js (figures).

import { TARGET_RATE } from "./wav.js";
import { FRAME_SAMPLES, pcm16Base64, base64PCM16ToFloat } from "./pcm.js";
import { SpeechDetector } from "./speech-detector.js";
import { Microphone, Player } from "./audio-io.js";
import { stats } from "./voice-stats.js";

const FRAME_MS = (FRAME_SAMPLES / TARGET_RATE) * 1000;

/** PREROLL_FRAMES frames before the start of speech are sent with it: 300 ms. */
export const PREROLL_FRAMES = 15;
/** MAX_UTTERANCE_FRAMES ends an utterance that never pauses (the engine takes 60 s at most). */
const MAX_UTTERANCE_FRAMES = 30_000 / FRAME_MS;
// Speech over an answer cancels it after this many voiced frames (200 ms), as the engine's own
// barge-in does: a cough or the answer's echo does not.
const BARGE_IN_FRAMES = 200 / FRAME_MS;
// How long a socket may take to open before live voice gives up on it.
const OPEN_TIMEOUT_MS = 10_000;
// Audio waiting in the socket past this (some 3 s of frames, as base64 JSON) means the uplink
// cannot carry speech as it is spoken: the utterance is given up rather than answered late.
const MAX_BUFFERED_BYTES = 128 << 10;

const SUBPROTOCOL = "engine.v1";

/** LiveVoiceError is a failure to open the socket: kind "ticket" or "socket". */
export class LiveVoiceError extends Error {
  constructor(kind, message, cause) {
    super(message);
    this.name = "LiveVoiceError";
    this.kind = kind;
    this.cause = cause;
  }
}

/**
 * LiveVoice holds the live conversation: the socket, the microphone, the end-of-speech
 * detector and the player.
 *
 * mintTicket() resolves with {ticket, expires_at} (POST /engine/stream-ticket); url() is the
 * socket's ws: or wss: URL; context() is the context sent with a socket's first message (and
 * again when it changes). handlers are called as things happen: onState(state) with
 * "connecting", "listening", "hearing", "thinking", "answering" or "off"; onLevel(peak);
 * onUtteranceEnd(turn) when end_of_speech is sent; onTranscript, onSpeak(turn, delta),
 * onSpec(turn, spec), onDone, onCancelled(turn); onInterrupted(turn) when the audio of a
 * finished answer is stopped by a barge-in; onTurnError(turn, error, final) where final
 * means the turn ends there; onSocketError(error) for an error of no turn; onLost(error) when
 * the socket closed or could not be opened again.
 */
export class LiveVoice {
  constructor({ mintTicket, url, context = () => ({}), handlers = {} }) {
    this.mintTicket = mintTicket;
    this.url = url;
    this.context = context;
    this.h = handlers;
    this.ctx = null;
    this.ws = null;
    this.opening = null;
    this.gen = 0; // counts closeSocket calls: a socket that opens after one is closed at once
    this.outbox = [];
    this.sentContext = "";
    this.live = false;
    this.turns = []; // turns the engine has not finished, oldest first
    this.utterance = false;
    this.utteranceFrames = 0;
    this.preroll = [];
    this.dropping = false; // a cancel was sent: the answer's speech and audio before its "cancelled" are dropped
    this.bargeInFrames = -1; // voiced frames of an utterance over an answer, counting to a barge-in; -1: none
    this.refused = false; // the engine refused the utterance under way: its end_of_speech makes no turn
    this.skipQuiet = -1; // ≥ 0: the rest of a cut utterance is not taken for a new one; quiet frames so far
    this.stopWanted = false; // stop() came while start() was under way
    this.audioTurn = null; // the turn whose audio was scheduled last
    this.detector = new SpeechDetector();
    this.state = "off";
  }

  emit(name, ...args) {
    try {
      this.h[name]?.(...args);
    } catch (err) {
      console.error(err);
    }
  }

  setState(s) {
    if (this.state === s) return;
    this.state = s;
    this.emit("onState", s);
  }

  /** audioContext returns the page's one AudioContext, made and resumed on first use. */
  audioContext() {
    if (!this.ctx) {
      this.ctx = new AudioContext({ latencyHint: "interactive" });
      this.player = new Player(this.ctx, { onIdle: () => this.afterPlayback() });
      this.ctx.onstatechange = () => this.onAudioState();
    }
    this.resting = false;
    return this.ctx;
  }

  /**
   * rest suspends the audio context once live voice is off and nothing plays, so that the
   * output device is let go; start() resumes it.
   */
  rest() {
    if (!this.ctx || this.live || this.player?.active || this.turns.length || this.ctx.state !== "running") return;
    this.resting = true;
    this.ctx.suspend().catch(() => {});
  }

  /**
   * onAudioState handles a context the system stopped (another app took the audio, a call:
   * Safari's "interrupted"): its sources never end and its microphone frames stop, so live
   * voice ends and says so, rather than wait for audio that will not come.
   */
  onAudioState() {
    const state = this.ctx.state;
    if (state === "running" || this.resting) return;
    if (this.live) {
      this.close(); // its playback too
      this.emit("onLost", { code: "audio_interrupted", reconnect: false });
    } else if (this.player?.active) {
      this.player.stopAll();
    }
  }

  /**
   * start switches live voice on: the socket, then the microphone. Call it from the user's
   * click, so that the audio context may start. It throws a LiveVoiceError when the ticket or
   * the socket fails, and the microphone's own errors (NotAllowedError …).
   */
  async start() {
    if (this.live) return;
    this.stopWanted = false;
    const ctx = this.audioContext();
    const resumed = ctx.resume().catch(() => {}); // first, while the click still counts
    this.setState("connecting");
    try {
      await this.connect();
      await resumed;
      this.detector.reset();
      this.preroll = [];
      this.utterance = false;
      this.mic = new Microphone(ctx, (frame) => this.onFrame(frame));
      await this.mic.start();
    } catch (err) {
      this.mic?.stop();
      this.mic = null;
      this.closeSocket();
      this.setState("off");
      throw err;
    }
    this.live = true;
    this.setState(this.player.active ? "answering" : "listening");
    if (this.stopWanted) this.stop();
  }

  /**
   * stop switches live voice off: the microphone stops, an utterance under way is sent as it
   * is, and the socket closes once the engine has answered what it was asked.
   */
  stop() {
    if (!this.live) {
      if (this.state === "connecting") this.stopWanted = true; // applied once start() is done
      return;
    }
    this.live = false;
    this.mic?.stop();
    this.mic = null;
    if (this.utterance) {
      this.detector.forceEnd();
      this.endUtterance();
    }
    this.preroll = [];
    if (!this.turns.length) this.closeSocket();
    this.setState("off");
    this.rest();
  }

  /** close ends everything at once: the socket, the microphone and the answer playing. */
  close() {
    this.live = false;
    this.mic?.stop();
    this.mic = null;
    this.utterance = false;
    this.player?.stopAll();
    for (const turn of this.turns.splice(0)) this.emit("onCancelled", turn);
    this.closeSocket();
    this.setState("off");
  }

  // --- socket ------------------------------------------------------------------------------

  /** connect opens a socket with a new ticket, unless one is open or opening. */
  connect() {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) return Promise.resolve(this.ws);
    if (this.opening) return this.opening;
    this.opening = this.open().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  async open() {
    const gen = this.gen;
    let ticket;
    try {
      const t = await this.mintTicket();
      ticket = t?.ticket;
      if (typeof ticket !== "string" || !ticket) throw new Error("the answer holds no ticket");
    } catch (err) {
      stats.counters.socketFailures++;
      throw new LiveVoiceError("ticket", err?.message || String(err), err);
    }
    stats.counters.ticketsMinted++;
    const ws = new WebSocket(this.url(), [SUBPROTOCOL, "ticket." + ticket]);
    let timer;
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = () => reject(new LiveVoiceError("socket", "the voice socket did not open"));
      ws.onclose = (e) => reject(new LiveVoiceError("socket", `the voice socket closed before it opened (${e.code})`));
      timer = setTimeout(() => {
        ws.close();
        reject(new LiveVoiceError("socket", "the voice socket did not open in time"));
      }, OPEN_TIMEOUT_MS);
    })
      .catch((err) => {
        stats.counters.socketFailures++;
        throw err;
      })
      .finally(() => clearTimeout(timer));
    if (ws.protocol !== SUBPROTOCOL) {
      ws.close();
      stats.counters.socketFailures++;
      throw new LiveVoiceError("socket", `the engine answered the subprotocol "${ws.protocol}"`);
    }
    if (gen !== this.gen) {
      ws.close(1000, "live voice off"); // switched off while it opened
      throw new LiveVoiceError("socket", "live voice was switched off");
    }
    stats.counters.socketsOpened++;
    this.ws = ws;
    this.sentContext = "";
    this.dropping = false;
    ws.onmessage = (e) => this.onMessage(e.data);
    ws.onerror = () => {};
    ws.onclose = (e) => this.onClose(ws, e);
    const queued = this.outbox.splice(0);
    for (const m of queued) this.send(m);
    return ws;
  }

  closeSocket() {
    this.gen++;
    const ws = this.ws;
    this.ws = null;
    this.outbox = [];
    this.dropping = false;
    if (ws) {
      ws.onclose = null;
      ws.onmessage = null;
      if (ws.readyState <= WebSocket.OPEN) ws.close(1000, "live voice off");
    }
  }

  onClose(ws, e) {
    if (ws !== this.ws) return;
    this.ws = null;
    this.dropping = false;
    this.outbox = [];
    stats.closes.push({ code: e.code, reason: e.reason, at: performance.now() });
    // The answers under way are lost with the socket.
    for (const turn of this.turns.splice(0)) this.emit("onTurnError", turn, { code: "network", message: "the voice socket closed" }, true);
    // Its start went with the socket: its tail alone would be heard as a request.
    if (this.utterance) this.cutUtterance({ skipRest: true });
    if (this.live) {
      // An idle socket is closed by the engine after two minutes: the next utterance opens one.
      this.emit("onLost", { code: "socket_closed", closeCode: e.code, reconnect: true });
    }
  }

  /**
   * send sends a message, with the context on a socket's first message and whenever it
   * changed. Without an open socket, the message waits while one opens; if none opens, live
   * voice is switched off and the handlers are told.
   */
  send(msg) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      this.outbox.push(msg);
      if (!this.opening) {
        this.connect().catch((err) => {
          this.outbox = [];
          for (const turn of this.turns.splice(0)) this.emit("onTurnError", turn, { code: "network", message: err.message }, true);
          const wasLive = this.live;
          this.close();
          if (wasLive) this.emit("onLost", { code: "reconnect_failed", error: err, reconnect: false });
        });
      }
      return false;
    }
    const ctx = this.context();
    const key = JSON.stringify(ctx);
    if (key !== this.sentContext) {
      msg = { ...msg, context: ctx };
      this.sentContext = key;
    }
    ws.send(JSON.stringify(msg));
    return true;
  }

  // --- microphone frames -------------------------------------------------------------------

  onFrame(frame) {
    if (!this.live) return;
    stats.counters.framesCaptured++;
    let peak = 0;
    for (let i = 0; i < frame.length; i++) peak = Math.max(peak, Math.abs(frame[i]));
    this.emit("onLevel", peak / 32768);
    const ev = this.detector.push(frame);
    if (this.utterance && this.ws?.bufferedAmount > MAX_BUFFERED_BYTES) this.abandonUtterance();
    if (this.utterance) {
      this.sendAudio(frame);
      if (this.bargeInFrames >= 0 && this.detector.last?.voiced && ++this.bargeInFrames >= BARGE_IN_FRAMES) {
        this.bargeInFrames = -1;
        if (this.answering()) this.bargeIn();
      }
      if (ev === "end") {
        this.endUtterance();
      } else if (++this.utteranceFrames >= MAX_UTTERANCE_FRAMES) {
        this.detector.forceEnd();
        this.endUtterance();
      }
      return;
    }
    this.preroll.push(frame);
    if (this.preroll.length > PREROLL_FRAMES) this.preroll.shift();
    if (this.skipQuiet >= 0) {
      // The cut utterance goes on until the silence that would have ended it.
      if (this.detector.last?.voiced) this.skipQuiet = 0;
      else if (++this.skipQuiet >= this.detector.endFrames) this.skipQuiet = -1;
      return;
    }
    if (ev === "start") this.startUtterance();
  }

  /**
   * abandonUtterance gives up the utterance being spoken on an uplink too slow for it: cancel
   * makes the engine drop what it has of it (and stop an answer running), and the rest of it is
   * not sent.
   */
  abandonUtterance() {
    this.cutUtterance({ skipRest: true });
    this.send({ type: "cancel" });
    this.dropping = true;
    this.emit("onSocketError", { code: "network_slow", message: "the connection is too slow for live voice", retryable: true });
    this.setState(this.player?.active ? "answering" : "listening");
  }

  /**
   * cutUtterance ends the utterance under way without an end_of_speech; with skipRest, what is
   * left of it, up to the silence that would have ended it, is not taken for a new one.
   */
  cutUtterance({ skipRest = false } = {}) {
    this.utterance = false;
    this.refused = false;
    this.bargeInFrames = -1;
    this.detector.forceEnd();
    if (skipRest) this.skipQuiet = 0;
  }

  /** answering tells whether an answer is playing or on its way. */
  answering() {
    return !!this.player?.active || this.turns.some((t) => t.transcript != null);
  }

  sendAudio(frame) {
    this.send({ type: "audio", chunk: pcm16Base64(frame) });
    stats.counters.framesSent++;
  }

  startUtterance() {
    stats.counters.speechStarts++;
    // Over an answer, the utterance cancels it once it has lasted as speech (onFrame).
    this.bargeInFrames = this.answering() ? 0 : -1;
    this.utterance = true;
    this.utteranceFrames = 0;
    for (const f of this.preroll.splice(0)) this.sendAudio(f);
    this.setState("hearing");
  }

  endUtterance() {
    this.utterance = false;
    this.bargeInFrames = -1;
    this.send({ type: "end_of_speech" });
    if (this.refused) {
      this.refused = false; // the engine drops it: no answer comes
      this.setState(this.player?.active ? "answering" : this.live ? "listening" : "off");
      return;
    }
    const now = performance.now();
    stats.counters.endOfSpeech++;
    Object.assign(stats, { endOfSpeechSent: now, firstAudioReceived: null, firstAudioPlaying: null, specReceived: null });
    this.addTurn(now);
    this.setState(this.player?.active ? "answering" : "thinking");
  }

  /**
   * bargeIn stops the answer: cancel goes to the engine and every scheduled chunk stops now.
   * What the engine sent before it read the cancel is dropped until its "cancelled".
   */
  bargeIn() {
    const b = { cancelSent: null, stopCalled: null, sources: 0, playbackStopped: null, activeAfter: null };
    if (this.ws?.readyState === WebSocket.OPEN) {
      this.send({ type: "cancel" });
      b.cancelSent = performance.now();
      stats.counters.cancelsSent++;
      this.dropping = true;
    }
    const { count, done } = this.player.stopAll();
    b.stopCalled = performance.now();
    // An answer the engine had finished is cut short too; one still running ends with its
    // "cancelled".
    const cut = this.audioTurn;
    this.audioTurn = null;
    if (cut && !this.turns.includes(cut)) this.emit("onInterrupted", cut);
    b.sources = count;
    b.activeAfter = this.player.sources.size;
    stats.bargeIns.push(b);
    Object.assign(stats, { cancelSent: b.cancelSent, playbackStopped: null });
    done.then((t) => {
      b.playbackStopped = t;
      if (stats.bargeIns.at(-1) === b) stats.playbackStopped = t;
    });
  }

  afterPlayback() {
    if (this.state === "answering") this.setState(this.live ? (this.turns.length ? "thinking" : "listening") : "off");
    this.rest();
  }

  // --- messages from the engine ------------------------------------------------------------

  onMessage(data) {
    let msg;
    try {
      msg = JSON.parse(data);
    } catch {
      return; // not a message of this protocol
    }
    const now = performance.now();
    switch (msg?.type) {
      case "cancelled": {
        stats.counters.cancelledReceived++;
        this.dropping = false;
        // Without turnId no answer was running. A turn the page has no transcript of was
        // cancelled while it was heard: the oldest such.
        const turn = msg.turnId ? (this.byId(msg.turnId) ?? this.waiting()) : null;
        if (turn) {
          this.remove(turn);
          turn.stats.cancelled = now;
          if (this.audioTurn === turn && this.player?.active) this.player.stopAll(); // cancelled by the engine: its audio stops too
          if (this.audioTurn === turn) this.audioTurn = null;
          this.emit("onCancelled", turn);
        }
        this.settle();
        return;
      }
      case "transcript": {
        stats.counters.transcripts++;
        const prev = this.running();
        if (prev) {
          // A transcript before the answer running was done or cancelled: the protocol says
          // this does not happen; that answer is taken as finished.
          this.remove(prev);
          this.emit("onDone", prev);
        }
        // The engine answers utterances in order. None waiting: it ended one itself
        // (StreamOptions.EndOfSpeech).
        const turn = this.waiting() ?? this.endUtteranceByEngine();
        turn.transcript = String(msg.text ?? "");
        turn.turnId = msg.turnId || "";
        // A conversation's first answer is preceded by the tenant's AI disclosure, said first.
        turn.disclosure = typeof msg.disclosure === "string" ? msg.disclosure : "";
        turn.stats.transcriptReceived = now;
        turn.stats.transcript = turn.transcript;
        this.emit("onTranscript", turn);
        return;
      }
      case "speak": {
        stats.counters.speakDeltas++;
        if (this.dropping) break;
        const turn = this.running();
        if (turn) this.emit("onSpeak", turn, String(msg.delta ?? ""));
        return;
      }
      case "audio": {
        stats.counters.audioMessages++;
        if (this.dropping) break;
        if (typeof msg.chunk !== "string" || !(msg.sampleRate > 0)) return;
        const samples = base64PCM16ToFloat(msg.chunk);
        if (!samples.length || !this.player) return;
        const turn = this.running();
        const starts = this.player.play(samples, msg.sampleRate);
        this.audioTurn = turn ?? null;
        if (turn) {
          turn.stats.audioMessages++;
          if (turn.stats.firstAudioReceived == null) {
            turn.stats.firstAudioReceived = now;
            turn.stats.firstAudioPlaying = starts;
            stats.firstAudioReceived = now;
            stats.firstAudioPlaying = starts;
          }
        }
        if (this.live && !this.utterance) this.setState("answering");
        return;
      }
      case "spec": {
        stats.counters.specs++;
        const turn = this.running();
        if (turn) {
          turn.spec = msg.spec ?? {};
          turn.stats.specReceived = now;
          stats.specReceived = now;
          this.emit("onSpec", turn, turn.spec);
        }
        return;
      }
      case "done": {
        stats.counters.dones++;
        const turn = msg.turnId ? this.byId(msg.turnId) : this.running();
        if (turn) {
          this.remove(turn);
          turn.stats.doneReceived = now;
          this.emit("onDone", turn);
        }
        this.settle();
        return;
      }
      case "error": {
        stats.counters.errors++;
        const e = msg.error ?? {};
        const err = { code: String(e.code ?? "internal"), message: String(e.message ?? ""), retryable: e.retryable === true };
        const known = msg.turnId ? this.byId(msg.turnId) : null;
        if (known) {
          known.error = err; // after its transcript: the apology, the spec and done follow
          this.emit("onTurnError", known, err, false);
          return;
        }
        // Before its transcript, an error ends the turn there. With the id of a turn the page
        // has no transcript of, it is the one being heard: the oldest waiting. Without an id,
        // it was sent as the engine read a message: about the audio of the utterance being
        // spoken, which is refused and whose end_of_speech then makes no turn, or about the
        // last end_of_speech (no_speech, rate_limited), whose turn is the newest waiting.
        const audioRefusal = err.code === "invalid_audio" || err.code === "utterance_too_long";
        const turn = msg.turnId ? this.waiting() : audioRefusal ? null : (this.newestWaiting() ?? null);
        if (turn) {
          this.remove(turn);
          turn.error = err;
          this.emit("onTurnError", turn, err, true);
          this.settle();
        } else {
          if (this.utterance && !msg.turnId) this.refused = true;
          this.emit("onSocketError", err);
        }
        return;
      }
      default:
        return; // a message of a later version of the protocol: ignored
    }
    stats.counters.dropped++; // the speech and audio of an answer a cancel stopped
  }

  /** running returns the turn whose answer is streaming: the one with a transcript. */
  running() {
    return this.turns.find((t) => t.transcript != null) ?? null;
  }

  /** waiting returns the oldest turn the engine has not sent the transcript of. */
  waiting() {
    return this.turns.find((t) => t.transcript == null) ?? null;
  }

  newestWaiting() {
    return this.turns.findLast((t) => t.transcript == null) ?? null;
  }

  byId(id) {
    return this.turns.find((t) => t.turnId === id) ?? null;
  }

  remove(turn) {
    const i = this.turns.indexOf(turn);
    if (i >= 0) this.turns.splice(i, 1);
  }

  /** settle sets the state after a turn ended, and closes a switched-off socket once idle. */
  settle() {
    if (!this.player?.active) this.setState(this.live ? (this.utterance ? "hearing" : this.turns.length ? "thinking" : "listening") : "off");
    this.maybeClose();
  }

  endUtteranceByEngine() {
    if (this.utterance) this.cutUtterance(); // the engine ended it: what the page hears next is a new one
    return this.addTurn(null);
  }

  /** addTurn adds a turn waiting for the engine's answer; endOfSpeechSent is when the page ended it. */
  addTurn(endOfSpeechSent) {
    const turnStats = { endOfSpeechSent, transcriptReceived: null, transcript: null, firstAudioReceived: null, firstAudioPlaying: null, specReceived: null, doneReceived: null, cancelled: null, audioMessages: 0 };
    stats.turns.push(turnStats);
    const turn = { transcript: null, turnId: "", error: null, spec: null, stats: turnStats };
    this.turns.push(turn);
    this.emit("onUtteranceEnd", turn);
    return turn;
  }

  /** maybeClose closes the socket of a switched-off live voice once its answers are in. */
  maybeClose() {
    if (!this.live && !this.turns.length) {
      this.closeSocket();
      this.rest();
    }
  }
}

/** wsURL returns the ws: or wss: URL of path on the origin of base (the page's by default). */
export function wsURL(path, base = location.href) {
  const u = new URL(path, base);
  u.protocol = u.protocol === "https:" ? "wss:" : "ws:";
  return u.href;
}
