// An AudioWorklet that posts microphone input, mixed to mono, to the page. By default each
// render block (128 samples) is posted as it comes; with processorOptions.batch, blocks are
// gathered and posted batch samples at a time (live voice asks for 20 ms: sampleRate / 50),
// which spares the page hundreds of messages a second.
registerProcessor("pcm-capture", class extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const batch = Math.floor(options?.processorOptions?.batch ?? 0);
    this.batch = batch > 0 ? batch : 0;
    this.buf = this.batch ? new Float32Array(this.batch) : null;
    this.fill = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (channels && channels.length) {
      const mono = new Float32Array(channels[0].length);
      for (const c of channels) {
        for (let i = 0; i < c.length; i++) mono[i] += c[i] / channels.length;
      }
      if (!this.batch) {
        this.port.postMessage(mono, [mono.buffer]);
      } else {
        for (let off = 0; off < mono.length;) {
          const n = Math.min(mono.length - off, this.batch - this.fill);
          this.buf.set(mono.subarray(off, off + n), this.fill);
          this.fill += n;
          off += n;
          if (this.fill === this.batch) {
            const out = this.buf;
            this.port.postMessage(out, [out.buffer]);
            this.buf = new Float32Array(this.batch);
            this.fill = 0;
          }
        }
      }
    }
    return true;
  }
});
