// Wire protocol v1 in the browser: the same codec as streaming/wire.py.
// Media: 1 byte kind, 8 bytes big-endian unsigned timestamp (ms), payload.
// Text: JSON objects with a "type"; server events are checked against the
// fields each type must carry, and an unknown type is an error.

export const PROTOCOL_VERSION = 1;
export const KIND_AUDIO = 0x01;
export const KIND_FRAME = 0x02;

// server event type -> fields it must carry (docs/protocol.md)
export const SERVER_EVENTS = {
  "ready": ["protocol", "backend"],
  "speech.started": ["t_ms"],
  "transcript.partial": ["text", "t_ms"],
  "transcript.final": ["turn", "text", "start_ms", "end_ms"],
  "camera.block": ["turn", "text", "source", "context", "context_source"],
  "turn.input": ["turn", "input", "user_message", "context_message"],
  "assistant.delta": ["turn", "text"],
  "assistant.audio": ["turn", "audio", "rate"],
  "assistant.done": ["turn", "text", "usage"],
  "metrics": ["turn", "latency_s"],
  "remark.delta": ["probe", "text"],
  "remark.audio": ["probe", "audio", "rate"],
  "probe.done": ["probe", "asked_ms", "frame_ms", "text", "silent"],
  "probe.paced": ["asked_ms", "gap_s", "min_gap_s", "rate", "sessions"],
  "watch.done": ["probes", "frames"],
  "error": ["code", "message"],
};

// close codes in words (docs/protocol.md)
export const CLOSE_REASONS = {
  1000: "the session ended normally",
  1006: "the connection dropped without a close (network or server stopped)",
  1009: "a message was too large",
  1011: "the assistant backend failed mid-turn",
  1013: "the server is full (it holds its maximum of sessions); try again later",
  4001: "the server refused the token (missing or wrong)",
  4002: "the server refused the session settings (or the backend could not start)",
  4008: "too many protocol violations",
  4010: "the session sat idle too long (nothing sent, nothing in flight)",
};

export function encodeMedia(kind, tMs, payload) {
  if (kind !== KIND_AUDIO && kind !== KIND_FRAME) throw new Error(`unknown media kind ${kind}`);
  const bytes = payload instanceof Uint8Array ? payload : new Uint8Array(payload);
  const out = new Uint8Array(9 + bytes.length);
  out[0] = kind;
  new DataView(out.buffer).setBigUint64(1, BigInt(Math.max(0, Math.round(tMs))));
  out.set(bytes, 9);
  return out.buffer;
}

export function hello(token, config) {
  return JSON.stringify({ type: "hello", protocol: PROTOCOL_VERSION, token: token || null, config });
}

export function turnEnd(tMs) {
  return JSON.stringify({ type: "turn.end", t_ms: Math.round(tMs) });
}

// the user heard only the first playedMs of this turn's spoken reply
export function replyCut(turn, playedMs) {
  return JSON.stringify({ type: "reply.cut", turn, played_ms: Math.max(0, Math.round(playedMs)) });
}

export function sessionEnd() {
  return JSON.stringify({ type: "session.end" });
}

export function decodeEvent(text) {
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new Error(`server event is not JSON: ${err.message}`);
  }
  if (!data || typeof data.type !== "string" || !(data.type in SERVER_EVENTS)) {
    throw new Error(`unknown server event type ${JSON.stringify(data && data.type)}`);
  }
  for (const field of SERVER_EVENTS[data.type]) {
    if (!(field in data)) throw new Error(`${data.type} event without '${field}'`);
  }
  return data;
}
