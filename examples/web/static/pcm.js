// PCM for the voice socket: 20 ms frames of 16 kHz mono PCM16, base64 both ways, and the
// resampling of the microphone's rate into those frames.

import { resample, base64, TARGET_RATE } from "./wav.js";

/** FRAME_SAMPLES is the length of the frames sent up: 20 ms at 16 kHz. */
export const FRAME_SAMPLES = 320;

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
