// Spoken replies: the assistant.audio pieces (base64 PCM16 little-endian
// mono at the event's rate) played as they arrive, back to back on one
// AudioContext timeline: no gap and no overlap between pieces.
//
// The player is the one place that knows how much of a reply was heard, and
// the one place that says so: when a reply stops before its end (a new
// turn's audio, the user starting to speak, a disconnect) it works out the
// position on the audio clock, calls sendCut(turn, playedMs) (the page sends
// `reply.cut`), and only then shows the reply as cut short. A page that shows
// a reply cut short has therefore always sent its cut first.
//
// Barge-in (bargeIn(asked)): the user speaking ends the replies to every turn
// asked so far, also those whose audio has not come yet (a busy server can
// send `speech.started` before the reply's first piece). Their audio that
// comes later is not played; the cut says what was heard of it (nothing,
// when none of it had played).

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
  // sendCut(turn, playedMs): a reply was stopped before its end, after playedMs of it
  constructor(onStatus, sendCut = () => {}) {
    this.onStatus = onStatus;
    this.sendCut = sendCut;
    this.context = null;
    this.reset();
  }

  // A new session: nothing queued, no turn yet (a disconnect already stopped what played).
  reset() {
    this.silence();
    this.turn = null; // the turn whose audio is queued
    this.turnSeconds = 0; // the turn's audio scheduled so far
    this.over = 0; // replies to turns up to this one are over (the user spoke): their audio is not played
    this.lastCut = 0; // the newest turn a cut was sent for: one cut a turn
    // what was scheduled and cut so far, for the page's tests
    this.counts = window.wearsimPlayback = { pieces: 0, samples: 0, seconds: 0, cuts: [] };
  }

  // Call from a user gesture (Connect): browsers only let audio start after one.
  unlock() {
    if (!this.context) this.context = new AudioContext();
    if (this.context.state === "suspended") this.context.resume();
  }

  play(event) {
    if (event.turn <= this.over || (this.turn !== null && event.turn < this.turn)) {
      this.cutUnheard(event.turn); // the user spoke over this reply: it is over
      return;
    }
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

  // The user spoke (`speech.started`): what plays stops, and the replies to the turns asked so far
  // (up to `asked`, the newest final transcript's turn) are over, their later audio too.
  bargeIn(asked) {
    this.stop();
    this.over = Math.max(this.over, asked);
  }

  // Stop what is still queued (barge-in, a new turn, a disconnect) and say how much of it was heard.
  stop() {
    if (!this.sources.length) return;
    // what is still queued plays back to back up to endAt: the rest was heard
    const unplayed = Math.max(0, this.endAt - this.context.currentTime);
    const turn = this.turn;
    this.silence();
    if (unplayed > 0) {
      this.cut(turn, 1000 * (this.turnSeconds - unplayed));
    } else {
      this.onStatus(turn, "spoken"); // it had all played; its end was not reported yet
    }
  }

  // Audio of a reply that is over: not played; the first of it sends the turn's cut (what had played).
  cutUnheard(turn) {
    if (turn > this.lastCut) this.cut(turn, turn === this.turn ? 1000 * this.turnSeconds : 0);
  }

  // The one place a cut is sent, then shown: in that order.
  cut(turn, playedMs) {
    const ms = Math.max(0, Math.round(playedMs));
    this.lastCut = Math.max(this.lastCut, turn);
    this.counts.cuts.push([turn, ms]);
    this.sendCut(turn, ms);
    this.onStatus(turn, "interrupted");
  }

  // Every queued source stopped, nothing reported.
  silence() {
    for (const source of this.sources || []) {
      source.onended = null;
      source.stop();
    }
    this.sources = [];
    this.endAt = 0;
  }
}
