// Microphone capture as the engine wants audio: RIFF WAV, 16-bit PCM, 16 kHz, mono. The
// browser records at its own rate (usually 44.1 or 48 kHz); the samples are mixed to mono,
// low-passed and resampled here.

export const TARGET_RATE = 16000;

/** resample converts mono float samples from rate `from` to rate `to`. */
export function resample(samples, from, to = TARGET_RATE) {
  if (from === to) return Float32Array.from(samples);
  const ratio = from / to;
  const out = new Float32Array(Math.floor(samples.length / ratio));
  if (ratio > 1) {
    // Downsampling: average the input samples each output sample covers (a box filter), which
    // keeps most of what lies above the new Nyquist frequency from folding back as noise.
    for (let i = 0; i < out.length; i++) {
      const start = i * ratio;
      const end = Math.min(samples.length, start + ratio);
      let sum = 0;
      let weight = 0;
      for (let j = Math.floor(start); j < end; j++) {
        const w = Math.min(j + 1, end) - Math.max(j, start);
        sum += samples[j] * w;
        weight += w;
      }
      out[i] = weight > 0 ? sum / weight : 0;
    }
    return out;
  }
  for (let i = 0; i < out.length; i++) { // upsampling: linear interpolation
    const pos = i * ratio;
    const j = Math.floor(pos);
    const frac = pos - j;
    const a = samples[j] ?? 0;
    const b = samples[j + 1] ?? a;
    out[i] = a + (b - a) * frac;
  }
  return out;
}

/**
 * normalize scales the audio so that its peak sits at half of full scale, by at most 10
 * times (so that silence stays silence). Speech recognisers hear a steady, unclipped level
 * best; near full scale they miss words.
 */
export function normalize(samples, target = 0.5) {
  let peak = 0;
  for (let i = 0; i < samples.length; i++) peak = Math.max(peak, Math.abs(samples[i]));
  if (peak === 0) return samples;
  const gain = Math.min(10, target / peak);
  for (let i = 0; i < samples.length; i++) samples[i] *= gain;
  return samples;
}

/** encodeWAV returns a WAV file of 16-bit PCM mono samples at rate. */
export function encodeWAV(samples, rate = TARGET_RATE) {
  const bytes = new Uint8Array(44 + samples.length * 2);
  const v = new DataView(bytes.buffer);
  const ascii = (off, s) => { for (let i = 0; i < s.length; i++) bytes[off + i] = s.charCodeAt(i); };
  ascii(0, "RIFF");
  v.setUint32(4, 36 + samples.length * 2, true);
  ascii(8, "WAVE");
  ascii(12, "fmt ");
  v.setUint32(16, 16, true); // fmt chunk size
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true); // byte rate
  v.setUint16(32, 2, true); // block align
  v.setUint16(34, 16, true); // bits per sample
  ascii(36, "data");
  v.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i++) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    v.setInt16(44 + i * 2, s < 0 ? s * 0x8000 : s * 0x7fff, true);
  }
  return bytes;
}

/** base64 encodes bytes with the standard alphabet and padding. */
export function base64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

// The worklet is a file of its own so that a strict Content-Security-Policy (script-src
// 'self') allows it.
const WORKLET_URL = new URL("./capture-worklet.js", import.meta.url);

/**
 * Recorder captures the microphone as PCM through an AudioWorklet (a ScriptProcessor where
 * worklets are missing). start() asks for the microphone; stop() returns {wav, seconds,
 * level} with wav a 16 kHz mono WAV (Uint8Array) and level the peak amplitude.
 */
export class Recorder {
  constructor({ maxSeconds = 20, onLevel = () => {} } = {}) {
    this.maxSeconds = maxSeconds;
    this.onLevel = onLevel;
    this.chunks = [];
    this.length = 0;
  }

  async start() {
    this.stream = await navigator.mediaDevices.getUserMedia({
      // The browser's gain control tends to clip loud speech, which the recogniser hears badly:
      // the level is evened out after recording instead (normalize).
      audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
    });
    this.ctx = new AudioContext();
    this.rate = this.ctx.sampleRate;
    const source = this.ctx.createMediaStreamSource(this.stream);
    const take = (mono) => {
      if (this.length >= this.maxSeconds * this.rate) return;
      this.chunks.push(mono);
      this.length += mono.length;
      let peak = 0;
      for (let i = 0; i < mono.length; i++) peak = Math.max(peak, Math.abs(mono[i]));
      this.onLevel(peak, this.length / this.rate);
    };
    if (this.ctx.audioWorklet) {
      await this.ctx.audioWorklet.addModule(WORKLET_URL);
      this.node = new AudioWorkletNode(this.ctx, "pcm-capture", { numberOfOutputs: 0 });
      this.node.port.onmessage = (e) => take(e.data);
      source.connect(this.node);
    } else {
      this.node = this.ctx.createScriptProcessor(4096, 1, 1);
      this.node.onaudioprocess = (e) => take(Float32Array.from(e.inputBuffer.getChannelData(0)));
      source.connect(this.node);
      this.node.connect(this.ctx.destination);
    }
  }

  async stop() {
    this.stream?.getTracks().forEach((t) => t.stop());
    this.node?.disconnect();
    await this.ctx?.close();
    const all = new Float32Array(this.length);
    let off = 0;
    let peak = 0;
    for (const c of this.chunks) {
      all.set(c, off);
      off += c.length;
    }
    for (let i = 0; i < all.length; i++) peak = Math.max(peak, Math.abs(all[i]));
    const pcm = normalize(resample(all, this.rate ?? TARGET_RATE));
    return { wav: encodeWAV(pcm), seconds: pcm.length / TARGET_RATE, level: peak };
  }
}
