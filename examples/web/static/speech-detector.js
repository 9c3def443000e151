// The end-of-speech detector of live voice: where, frame by frame, the user's speech starts
// and ends.

import { TARGET_RATE } from "./wav.js";
import { FRAME_SAMPLES } from "./pcm.js";

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
