// An AudioWorklet that posts microphone input, mixed to mono, to the page. By default each
// render block (128 samples) is posted as it comes; with processorOptions.batch, blocks are
// gathered and posted batch samples at a time (live voice asks for 20 ms: sampleRate / 50),
// which spares the page hundreds of messages a second and the audio thread an allocation per
// block. The message "stop" ends the processor.
registerProcessor("pcm-capture", class extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const batch = Math.floor(options?.processorOptions?.batch ?? 0);
    this.batch = batch > 0 ? batch : 0;
    this.buf = this.batch ? new Float32Array(this.batch) : null;
    this.fill = 0;
    this.stopped = false;
    this.port.onmessage = (e) => {
      if (e.data === "stop") this.stopped = true;
    };
  }

  process(inputs) {
    if (this.stopped) return false;
    const channels = inputs[0];
    if (!channels || !channels.length) return true;
    const n = channels[0].length;
    const k = channels.length;
    if (!this.batch) {
      const mono = new Float32Array(n);
      for (const c of channels) {
        for (let i = 0; i < n; i++) mono[i] += c[i] / k;
      }
      this.port.postMessage(mono, [mono.buffer]);
      return true;
    }
    for (let i = 0; i < n; i++) {
      let v = 0;
      for (let c = 0; c < k; c++) v += channels[c][i];
      this.buf[this.fill++] = v / k;
      if (this.fill === this.batch) {
        const out = this.buf;
        this.port.postMessage(out, [out.buffer]);
        this.buf = new Float32Array(this.batch);
        this.fill = 0;
      }
    }
    return true;
  }
});
