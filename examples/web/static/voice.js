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

import { resample, base64, TARGET_RATE } from "./wav.js";

/** FRAME_SAMPLES is the length of the frames sent up: 20 ms at 16 kHz. */
export const FRAME_SAMPLES = 320;
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

// --- words ---------------------------------------------------------------------------------

/** strings are the live voice's own words; text.js holds the rest of the page's. */
export const voiceStrings = {
  en: {
    liveVoice: "Live voice",
    startLive: "Start live voice",
    stopLive: "Stop live voice",
    connecting: "Connecting live voice…",
    listening: "Live voice is on. Speak when you like; speak over an answer to interrupt it.",
    hearing: "Listening…",
    thinking: "Working on it…",
    answering: "Answering. Speak to interrupt.",
    off: "Live voice is off.",
    interrupted: "Interrupted.",
    noSpeech: "No words were heard. Try again a little closer to the microphone.",
    ticketFailed: (why) => `Live voice could not start: the stream ticket was refused. ${why}`,
    socketFailed: "Live voice could not start: the voice connection was refused.",
    socketLost: "The live voice connection was lost; it reconnects when you speak again.",
    reconnectFailed: "The live voice connection could not be opened again. Live voice is off.",
    audioInterrupted: "Another app took the audio. Live voice is off; turn it on again to go on.",
    fallback: "The microphone records a whole message instead: press it again to send.",
  },
  es: {
    liveVoice: "Voz en directo",
    startLive: "Activar la voz en directo",
    stopLive: "Desactivar la voz en directo",
    connecting: "Conectando la voz en directo…",
    listening: "La voz en directo está activa. Habla cuando quieras; habla sobre una respuesta para interrumpirla.",
    hearing: "Escuchando…",
    thinking: "Preparando la respuesta…",
    answering: "Respondiendo. Habla para interrumpir.",
    off: "La voz en directo está desactivada.",
    interrupted: "Interrumpida.",
    noSpeech: "No se oyeron palabras. Prueba un poco más cerca del micrófono.",
    ticketFailed: (why) => `No se pudo activar la voz en directo: se rechazó el permiso de conexión. ${why}`,
    socketFailed: "No se pudo activar la voz en directo: se rechazó la conexión de voz.",
    socketLost: "Se perdió la conexión de voz; se recupera cuando vuelvas a hablar.",
    reconnectFailed: "No se pudo volver a abrir la conexión de voz. La voz en directo está desactivada.",
    audioInterrupted: "Otra aplicación tomó el audio. La voz en directo está desactivada; actívela de nuevo para seguir.",
    fallback: "El micrófono graba un mensaje completo: púlsalo otra vez para enviarlo.",
  },
  ar: {
    liveVoice: "الصوت المباشر",
    startLive: "تشغيل الصوت المباشر",
    stopLive: "إيقاف الصوت المباشر",
    connecting: "جارٍ توصيل الصوت المباشر…",
    listening: "الصوت المباشر يعمل. تحدّث متى شئت، وتحدّث أثناء الإجابة لمقاطعتها.",
    hearing: "جارٍ الاستماع…",
    thinking: "جارٍ تحضير الإجابة…",
    answering: "جارٍ الرد. تحدّث للمقاطعة.",
    off: "الصوت المباشر متوقف.",
    interrupted: "قوطعت.",
    noSpeech: "لم تُسمع أي كلمات. حاول مرة أخرى بالقرب من الميكروفون.",
    ticketFailed: (why) => `تعذّر تشغيل الصوت المباشر: رُفض إذن الاتصال. ${why}`,
    socketFailed: "تعذّر تشغيل الصوت المباشر: رُفض الاتصال الصوتي.",
    socketLost: "انقطع الاتصال الصوتي؛ سيُستعاد عندما تتحدث مرة أخرى.",
    reconnectFailed: "تعذّر فتح الاتصال الصوتي مرة أخرى. الصوت المباشر متوقف.",
    audioInterrupted: "استخدم تطبيق آخر الصوت. الصوت المباشر متوقف؛ شغّله مرة أخرى للمتابعة.",
    fallback: "يسجّل الميكروفون رسالة كاملة بدلًا من ذلك: اضغطه مرة أخرى للإرسال.",
  },
};

// --- figures for the tests -----------------------------------------------------------------

/**
 * stats is what the live voice did, for the browser tests and the curious (window.__voiceStats).
 * Times are performance.now() milliseconds. The top-level times are those of the latest turn
 * and barge-in; turns and bargeIns keep each one.
 */
export const stats = {
  endOfSpeechSent: null,
  firstAudioReceived: null,
  firstAudioPlaying: null,
  specReceived: null,
  cancelSent: null,
  playbackStopped: null,
  /** per turn: endOfSpeechSent, transcriptReceived, transcript, firstAudioReceived, firstAudioPlaying, specReceived, doneReceived, cancelled, audioMessages */
  turns: [],
  /** per barge-in: cancelSent, stopCalled, sources (how many were stopped), playbackStopped, activeAfter */
  bargeIns: [],
  /** socket closes: {code, reason, at} */
  closes: [],
  counters: {
    ticketsMinted: 0,
    socketsOpened: 0,
    socketFailures: 0,
    framesCaptured: 0,
    framesSent: 0,
    speechStarts: 0,
    endOfSpeech: 0,
    transcripts: 0,
    speakDeltas: 0,
    audioMessages: 0,
    chunksScheduled: 0,
    chunksStopped: 0,
    specs: 0,
    dones: 0,
    errors: 0,
    cancelsSent: 0,
    cancelledReceived: 0,
    dropped: 0,
  },
};

// --- PCM -----------------------------------------------------------------------------------

/** floatToPCM16 converts float samples in [-1, 1] to 16-bit integers. */
export function floatToPCM16(samples) {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    out[i] = s < 0 ? s * 0x8000 : s * 0x7fff;
  }
  return out;
}

/** pcm16Base64 encodes 16-bit samples as little-endian bytes in base64, as the socket takes them. */
export function pcm16Base64(samples) {
  const bytes = new Uint8Array(samples.length * 2);
  const v = new DataView(bytes.buffer);
  for (let i = 0; i < samples.length; i++) v.setInt16(i * 2, samples[i], true);
  return base64(bytes);
}

/** base64PCM16ToFloat decodes base64 little-endian 16-bit PCM to float samples. */
export function base64PCM16ToFloat(b64) {
  const bin = atob(b64);
  const n = bin.length >> 1;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    let v = bin.charCodeAt(2 * i) | (bin.charCodeAt(2 * i + 1) << 8);
    if (v >= 0x8000) v -= 0x10000;
    out[i] = v / 0x8000;
  }
  return out;
}

/**
 * FrameResampler turns blocks of mono float samples at the microphone's rate into frames of
 * FRAME_SAMPLES 16-bit samples at 16 kHz, calling onFrame(Int16Array) for each. Each block is
 * resampled on its own (wav.js's resampler); the count of samples out follows the count in
 * exactly, so that the stream neither drifts nor loses a sample at rates such as 44.1 kHz.
 */
export class FrameResampler {
  constructor(from, onFrame) {
    this.from = from;
    this.onFrame = onFrame;
    this.inTotal = 0;
    this.outTotal = 0;
    this.frame = new Float32Array(FRAME_SAMPLES);
    this.fill = 0;
  }

  push(block) {
    this.inTotal += block.length;
    const want = Math.floor((this.inTotal * TARGET_RATE) / this.from) - this.outTotal;
    let out = resample(block, this.from);
    if (out.length !== want) {
      const fixed = new Float32Array(Math.max(0, want));
      fixed.set(out.subarray(0, fixed.length));
      const last = out.length ? out[out.length - 1] : 0;
      for (let i = out.length; i < fixed.length; i++) fixed[i] = last;
      out = fixed;
    }
    this.outTotal += out.length;
    for (let off = 0; off < out.length;) {
      const n = Math.min(out.length - off, FRAME_SAMPLES - this.fill);
      this.frame.set(out.subarray(off, off + n), this.fill);
      this.fill += n;
      off += n;
      if (this.fill === FRAME_SAMPLES) {
        this.fill = 0;
        this.onFrame(floatToPCM16(this.frame));
      }
    }
  }
}

// --- end of speech -------------------------------------------------------------------------

/**
 * SpeechDetector tells, frame by frame, where speech starts and ends: an energy and
 * zero-crossing detector over a noise floor it learns from the first frames, like the engine's
 * own (package audio/vad).
 *
 * Why not a neural detector such as @ricky0123/vad-web (Silero VAD): it runs on
 * onnxruntime-web, whose wasm runtime and the Silero model are megabytes of files. The reference
 * server embeds this page's files in its Go binary (examples/web uses go:embed), so they would
 * be served from the binary, and loaded before the first word. This detector is some hundred
 * lines, needs nothing, costs microseconds a frame, and tells a voice from a steady room and
 * from clicks; like the engine's, it cannot tell speech from music or a television. The engine
 * runs its own detector on what it receives, so a false start here costs a no_speech answer,
 * not a wrong turn.
 *
 * Each 20 ms frame is high-passed at 100 Hz (so that a DC offset or hum is not energy), then
 * measured: its level in dBFS and its dominant frequency from zero crossings counted with
 * hysteresis. The noise floor starts at the quietest of the first learnFrames frames (200 ms;
 * digital silence, exact zeros, is skipped and never moves the floor, which stays at -75 dBFS
 * or above), then follows quiet frames quickly down and slowly up; when every frame of the last 3 s was
 * above it, the noise itself grew, and it jumps to their minimum. A frame is voiced when it is
 * threshold dB above the floor (3 dB less inside speech, to keep weak endings), above minDB, and
 * its dominant frequency is at least 90 Hz. Speech starts after startFrames voiced frames
 * (100 ms, with gaps of at most 40 ms) and ends after endFrames (700 ms) without one.
 */
// Frames at or below this level are digital silence; the floor never goes below MIN_FLOOR_DB,
// which no microphone's own noise reaches.
const DIGITAL_SILENCE_DB = -110;
const MIN_FLOOR_DB = -75;

export class SpeechDetector {
  constructor({
    rate = TARGET_RATE,
    learnFrames = 10,
    startFrames = 5,
    maxGapFrames = 2,
    endFrames = 35,
    threshold = 9,
    hysteresis = 3,
    minDB = -60,
    minHz = 90,
  } = {}) {
    Object.assign(this, { rate, learnFrames, startFrames, maxGapFrames, endFrames, threshold, hysteresis, minDB, minHz });
    const frameSeconds = FRAME_SAMPLES / rate;
    this.pole = Math.exp((-2 * Math.PI * 100) / rate);
    this.rise = 1 - Math.exp(-frameSeconds / 1.0); // up: time constant 1 s
    this.fall = 1 - Math.exp(-frameSeconds / 0.1); // down: 100 ms
    this.blockFrames = Math.round(0.25 / frameSeconds); // the minimum tracker: 12 blocks of 250 ms
    this.blocks = 12;
    this.reset();
  }

  reset() {
    this.floor = NaN;
    this.frames = 0;
    this.speaking = false;
    this.run = 0;
    this.gap = 0;
    this.silence = 0;
    this.x = 0;
    this.y = 0;
    this.primed = false;
    this.mins = [];
    this.blockMin = Infinity;
    this.inBlock = 0;
    this.last = null;
  }

  /** measure returns the frame's level in dBFS and its dominant frequency in Hz. */
  measure(frame) {
    if (!this.primed) {
      this.x = frame[0] ?? 0;
      this.primed = true;
    }
    const y = new Float64Array(frame.length);
    let px = this.x;
    let py = this.y;
    let sum = 0;
    for (let i = 0; i < frame.length; i++) {
      const x = frame[i];
      py = this.pole * (py + x - px);
      px = x;
      y[i] = py;
      sum += py * py;
    }
    this.x = px;
    this.y = py;
    const ms = sum / Math.max(1, frame.length);
    const db = Math.max(-120, 10 * Math.log10(ms / (32768 * 32768) || 1e-12));
    // Zero crossings of a Schmitt trigger at a quarter of the RMS: their mean spacing is half
    // the period of the strongest frequency; faint noise on a slow wave adds none.
    const thr = 0.25 * Math.sqrt(ms);
    let state = 0;
    let crossings = 0;
    let first = 0;
    let last = 0;
    for (let i = 0; i < y.length; i++) {
      const s = y[i] > thr ? 1 : y[i] < -thr ? -1 : 0;
      if (s === 0 || s === state) continue;
      if (state !== 0) {
        if (crossings === 0) first = i;
        crossings++;
        last = i;
      }
      state = s;
    }
    const hz = crossings >= 2 && last > first ? ((crossings - 1) * this.rate) / (2 * (last - first)) : 0;
    return { db, hz };
  }

  /**
   * push analyses the next frame (Int16Array) and returns "start" when speech starts with it,
   * "end" when it ends with it, else null.
   */
  push(frame) {
    const { db, hz } = this.measure(frame);
    // Exact zeros (a microphone starting, muted, or changing device; a noise gate) tell
    // nothing of the room: learnt as its floor, they made any noise speech until the floor
    // caught up. They are not learnt from; later, they are quiet at MIN_FLOOR_DB.
    const digital = db <= DIGITAL_SILENCE_DB;
    if (this.frames < this.learnFrames) {
      if (!digital) {
        this.frames++;
        this.floor = Math.max(MIN_FLOOR_DB, Number.isNaN(this.floor) ? db : Math.min(this.floor, db));
      }
      this.last = { db, hz, voiced: false, floor: this.floor };
      return null;
    }
    const margin = this.threshold - (this.speaking ? this.hysteresis : 0);
    const loud = db >= Math.max(this.floor + margin, this.minDB);
    const voiced = loud && hz >= this.minHz;
    this.track(digital ? MIN_FLOOR_DB : db, loud);
    this.last = { db, hz, voiced, floor: this.floor };
    if (!this.speaking) {
      if (voiced) {
        this.run++;
        this.gap = 0;
      } else if (this.run > 0 && ++this.gap > this.maxGapFrames) {
        this.run = 0;
        this.gap = 0;
      }
      if (this.run >= this.startFrames) {
        this.speaking = true;
        this.silence = 0;
        this.run = 0;
        this.gap = 0;
        return "start";
      }
      return null;
    }
    if (voiced) {
      this.silence = 0;
    } else if (++this.silence >= this.endFrames) {
      this.speaking = false;
      this.silence = 0;
      return "end";
    }
    return null;
  }

  /** track moves the noise floor with a frame of level db. */
  track(db, loud) {
    if (db < this.floor) this.floor += this.fall * (db - this.floor);
    else if (!loud) this.floor += this.rise * Math.min(db - this.floor, 3);
    this.blockMin = Math.min(this.blockMin, db);
    if (++this.inBlock === this.blockFrames) {
      this.mins.push(this.blockMin);
      if (this.mins.length > this.blocks) this.mins.shift();
      this.inBlock = 0;
      this.blockMin = Infinity;
      if (this.mins.length === this.blocks) this.floor = Math.max(this.floor, Math.min(...this.mins));
    }
    this.floor = Math.max(this.floor, MIN_FLOOR_DB);
  }

  /** forceEnd ends the current utterance, as when it ran too long. */
  forceEnd() {
    this.speaking = false;
    this.silence = 0;
    this.run = 0;
    this.gap = 0;
  }
}

// --- microphone ----------------------------------------------------------------------------

// The worklet is a file of its own, which a strict Content-Security-Policy (script-src 'self')
// allows.
const WORKLET_URL = new URL("./capture-worklet.js", import.meta.url);
const workletLoaded = new WeakMap(); // AudioContext → Promise of addModule

/**
 * Microphone captures the microphone on ctx through the capture worklet and calls
 * onFrame(Int16Array) with each 20 ms frame of 16 kHz mono PCM.
 */
export class Microphone {
  constructor(ctx, onFrame) {
    this.ctx = ctx;
    this.onFrame = onFrame;
  }

  async start() {
    // Echo cancellation keeps the answer's own voice, played by the speakers, from sounding
    // like the user talking over it. Gain control and noise suppression stay off: they pump the
    // level, which the end-of-speech detector and the recogniser both hear badly.
    this.stream = await navigator.mediaDevices.getUserMedia({
      audio: { channelCount: 1, echoCancellation: true, noiseSuppression: false, autoGainControl: false },
    });
    const ctx = this.ctx;
    const resampler = new FrameResampler(ctx.sampleRate, this.onFrame);
    this.source = ctx.createMediaStreamSource(this.stream);
    if (ctx.audioWorklet) {
      if (!workletLoaded.has(ctx)) workletLoaded.set(ctx, ctx.audioWorklet.addModule(WORKLET_URL));
      await workletLoaded.get(ctx);
      this.node = new AudioWorkletNode(ctx, "pcm-capture", {
        numberOfOutputs: 0,
        processorOptions: { batch: Math.round(ctx.sampleRate / 50) },
      });
      this.node.port.onmessage = (e) => resampler.push(e.data);
      this.source.connect(this.node);
    } else {
      this.node = ctx.createScriptProcessor(1024, 1, 1);
      this.node.onaudioprocess = (e) => resampler.push(Float32Array.from(e.inputBuffer.getChannelData(0)));
      this.source.connect(this.node);
      this.node.connect(ctx.destination);
    }
  }

  stop() {
    this.stream?.getTracks().forEach((t) => t.stop());
    if (this.node?.port) {
      this.node.port.onmessage = null;
      this.node.port.postMessage("stop"); // the processor ends, instead of running on unheard
    }
    this.node?.disconnect();
    this.source?.disconnect();
    this.stream = this.node = this.source = null;
  }
}

// --- playback ------------------------------------------------------------------------------

/**
 * Player plays chunks of PCM back to back on one AudioContext: each chunk is an AudioBuffer
 * started where the one before ends (a "next start time" cursor), or at once when nothing is
 * scheduled. stopAll stops every scheduled source at once.
 */
export class Player {
  constructor(ctx, { onIdle = () => {} } = {}) {
    this.ctx = ctx;
    this.onIdle = onIdle;
    this.sources = new Set();
    this.next = 0;
  }

  /** active tells whether answer audio is playing or scheduled. */
  get active() {
    return this.sources.size > 0;
  }

  /**
   * play schedules float samples at rate and returns the performance.now() time at which they
   * start playing on the context's clock: now, when nothing was scheduled (a source started at
   * or before currentTime plays from the next render quantum), else when the chunk before ends.
   */
  play(samples, rate) {
    const ctx = this.ctx;
    const buffer = ctx.createBuffer(1, samples.length, rate);
    buffer.copyToChannel(samples, 0);
    const src = ctx.createBufferSource();
    src.buffer = buffer;
    src.connect(ctx.destination);
    const now = ctx.currentTime;
    const at = Math.max(this.next, now);
    src.start(at);
    this.next = at + buffer.duration;
    this.sources.add(src);
    src.onended = () => this.ended(src);
    stats.counters.chunksScheduled++;
    return performance.now() + (at - now) * 1000;
  }

  ended(src) {
    src.disconnect();
    if (this.sources.delete(src) && !this.sources.size) {
      this.next = 0;
      this.onIdle();
    }
  }

  /**
   * stopAll stops every source now. It returns how many were stopped and a promise of the time
   * the last of them ended (null if one did not report within half a second).
   */
  stopAll() {
    const list = [...this.sources];
    this.sources.clear();
    this.next = 0;
    const ended = list.map(
      (src) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve(null), 500);
          src.onended = () => {
            clearTimeout(timer);
            src.disconnect();
            resolve(performance.now());
          };
        }),
    );
    for (const src of list) {
      try {
        src.stop();
      } catch {
        // never started: nothing to stop
      }
    }
    stats.counters.chunksStopped += list.length;
    const done = list.length
      ? Promise.all(ended).then((times) => (times.includes(null) ? null : Math.max(...times)))
      : Promise.resolve(performance.now());
    return { count: list.length, done };
  }
}

// --- the live conversation -----------------------------------------------------------------

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
    this.skipping = false; // a socket closed inside an utterance: its tail is not sent as one
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
    if (this.utterance) {
      // Its start went with the socket: its tail alone would be heard as a request.
      this.utterance = false;
      this.refused = false;
      this.bargeInFrames = -1;
      this.detector.forceEnd();
      this.skipping = true;
      this.skipQuiet = 0;
    }
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
    if (this.skipping) {
      // The cut utterance goes on until the silence that would have ended it.
      if (this.detector.last?.voiced) this.skipQuiet = 0;
      else if (++this.skipQuiet >= this.detector.endFrames) this.skipping = false;
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
    this.utterance = false;
    this.bargeInFrames = -1;
    this.detector.forceEnd();
    this.skipping = true;
    this.skipQuiet = 0;
    this.send({ type: "cancel" });
    this.dropping = true;
    this.emit("onSocketError", { code: "network_slow", message: "the connection is too slow for live voice", retryable: true });
    this.setState(this.player?.active ? "answering" : "listening");
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
    const turnStats = { endOfSpeechSent: now, transcriptReceived: null, transcript: null, firstAudioReceived: null, firstAudioPlaying: null, specReceived: null, doneReceived: null, cancelled: null, audioMessages: 0 };
    stats.turns.push(turnStats);
    Object.assign(stats, { endOfSpeechSent: now, firstAudioReceived: null, firstAudioPlaying: null, specReceived: null });
    const turn = { transcript: null, turnId: "", error: null, spec: null, stats: turnStats };
    this.turns.push(turn);
    this.emit("onUtteranceEnd", turn);
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
    if (this.utterance) {
      this.utterance = false; // the engine ended it: what the page hears next is a new one
      this.bargeInFrames = -1;
      this.detector.forceEnd();
    }
    const turnStats = { endOfSpeechSent: null, transcriptReceived: null, transcript: null, firstAudioReceived: null, firstAudioPlaying: null, specReceived: null, doneReceived: null, cancelled: null, audioMessages: 0 };
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
