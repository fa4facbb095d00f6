// Spoken replies: the assistant.audio pieces (base64 PCM16 little-endian
// mono at the event's rate) played as they arrive, back to back on one
// AudioContext timeline: no gap and no overlap between pieces. A new turn's
// audio, or the user starting to speak (barge-in), stops what still plays,
// and onCut(turn, playedMs) says how much of that reply was heard.

const LEAD_S = 0.05; // when nothing is queued, start this far ahead of now

// base64 PCM16 little-endian -> Float32 samples in [-1, 1)
export function pcm16ToFloat32(base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const view = new DataView(bytes.buffer);
  const samples = new Float32Array(bytes.length >> 1);
  for (let i = 0; i < samples.length; i++) samples[i] = view.getInt16(2 * i, true) / 32768;
  return samples;
}

export class ReplyPlayer {
  // onStatus(turn, status): status is "speaking", "spoken" or "interrupted"
  // onCut(turn, playedMs): a reply was stopped before its end, after playedMs of it
  constructor(onStatus, onCut = () => {}) {
    this.onStatus = onStatus;
    this.onCut = onCut;
    this.context = null;
    this.sources = []; // scheduled and not yet ended
    this.endAt = 0; // where the next piece starts on the context's clock
    this.turn = null; // the turn whose audio is queued
    this.turnSeconds = 0; // the turn's audio scheduled so far
    // what was scheduled so far, for the page's tests
    this.counts = window.wearsimPlayback = { pieces: 0, samples: 0, seconds: 0 };
  }

  // Call from a user gesture (Connect): browsers only let audio start after one.
  unlock() {
    if (!this.context) this.context = new AudioContext();
    if (this.context.state === "suspended") this.context.resume();
  }

  play(event) {
    this.unlock();
    if (event.turn !== this.turn) {
      this.stop(); // a new turn: the previous reply is over
      this.turn = event.turn;
      this.turnSeconds = 0;
    }
    const samples = pcm16ToFloat32(event.audio);
    if (!samples.length) return;
    const buffer = this.context.createBuffer(1, samples.length, event.rate);
    buffer.copyToChannel(samples, 0);
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    const now = this.context.currentTime;
    if (this.endAt < now) this.endAt = now + LEAD_S; // the queue ran dry: start fresh
    source.start(this.endAt);
    this.endAt += buffer.duration;
    this.turnSeconds += buffer.duration;
    this.sources.push(source);
    const turn = this.turn;
    source.onended = () => {
      this.sources = this.sources.filter((s) => s !== source);
      if (!this.sources.length) this.onStatus(turn, "spoken");
    };
    this.counts.pieces += 1;
    this.counts.samples += samples.length;
    this.counts.seconds += buffer.duration;
    this.onStatus(turn, "speaking");
  }

  // Silence what is still queued (barge-in, a new turn, a disconnect).
  stop() {
    if (this.sources.length) {
      this.onStatus(this.turn, "interrupted");
      // what is still queued plays back to back up to endAt: the rest was heard
      const unplayed = Math.max(0, this.endAt - this.context.currentTime);
      this.onCut(this.turn, Math.max(0, Math.round(1000 * (this.turnSeconds - unplayed))));
    }
    for (const source of this.sources) {
      source.onended = null;
      source.stop();
    }
    this.sources = [];
    this.endAt = 0;
  }
}
