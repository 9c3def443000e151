// The microphone and the speaker of live voice: capture through an AudioWorklet into 20 ms
// frames, and playback of the answer's chunks back to back on one AudioContext.

import { FrameResampler } from "./pcm.js";
import { stats } from "./voice-stats.js";

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
