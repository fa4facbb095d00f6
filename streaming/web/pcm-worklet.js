// Microphone to 16 kHz mono PCM16 in 20 ms chunks (320 samples), posted to
// the page. Downsampling averages the input samples that fall into each
// output sample (a box filter), which keeps speech intelligible for Whisper.

const OUT_RATE = 16000;
const CHUNK = 320;

class Pcm16Downsampler extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / OUT_RATE; // input samples per output sample
    this.phase = 0;
    this.sum = 0;
    this.count = 0;
    this.chunk = new Int16Array(CHUNK);
    this.filled = 0;
  }

  process(inputs) {
    const channels = inputs[0];
    if (!channels || channels.length === 0) return true;
    const input = channels[0];
    for (let i = 0; i < input.length; i++) {
      let x = input[i];
      for (let c = 1; c < channels.length; c++) x += channels[c][i];
      this.sum += x / channels.length;
      this.count += 1;
      this.phase += 1;
      if (this.phase >= this.step) {
        this.phase -= this.step;
        const value = Math.max(-1, Math.min(1, this.sum / this.count));
        this.chunk[this.filled++] = Math.round(value * 32767);
        this.sum = 0;
        this.count = 0;
        if (this.filled === CHUNK) {
          this.port.postMessage(this.chunk.buffer, [this.chunk.buffer]);
          this.chunk = new Int16Array(CHUNK);
          this.filled = 0;
        }
      }
    }
    return true;
  }
}

registerProcessor("pcm16-downsampler", Pcm16Downsampler);
