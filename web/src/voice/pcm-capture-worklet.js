// AudioWorklet: turns the microphone's float samples into 16-bit little-endian PCM frames of ~100 ms.
class PcmCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.pending = [];
    this.length = 0;
  }

  process(inputs) {
    const channel = inputs[0] && inputs[0][0];
    if (channel) {
      const frame = new Int16Array(channel.length);
      for (let index = 0; index < channel.length; index += 1) {
        const sample = Math.max(-1, Math.min(1, channel[index]));
        frame[index] = sample < 0 ? sample * 0x8000 : sample * 0x7fff;
      }
      this.pending.push(frame);
      this.length += frame.length;
      if (this.length >= sampleRate / 10) {
        const joined = new Int16Array(this.length);
        let offset = 0;
        for (const part of this.pending) {
          joined.set(part, offset);
          offset += part.length;
        }
        this.port.postMessage(joined.buffer, [joined.buffer]);
        this.pending = [];
        this.length = 0;
      }
    }
    return true;
  }
}

registerProcessor('pcm-capture', PcmCapture);
