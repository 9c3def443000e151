// An AudioWorklet that posts each block of microphone input, mixed to mono, to the page.
registerProcessor("pcm-capture", class extends AudioWorkletProcessor {
  process(inputs) {
    const channels = inputs[0];
    if (channels && channels.length) {
      const mono = new Float32Array(channels[0].length);
      for (const c of channels) {
        for (let i = 0; i < c.length; i++) mono[i] += c[i] / channels.length;
      }
      this.port.postMessage(mono, [mono.buffer]);
    }
    return true;
  }
});
