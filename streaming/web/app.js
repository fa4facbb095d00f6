// The live assistant page: camera and microphone in, the wire protocol v1
// over one WebSocket, and what the assistant heard, saw and said, live.
import * as wire from "./wire.js";
import { setupStudio } from "./studio.js";
import { ReplyPlayer, pcm16ToFloat32 } from "./playback.js";

const $ = (id) => document.getElementById(id);
const state = { info: null, ws: null, stream: null, audio: null, frameTimer: null, t0: 0, talking: false, turns: {},
  asked: 0, bargeIn: false, stepTimer: null, ready: false };
// backends that can speak their replies (output "audio")
const REALTIME_PREFIXES = ["openai-realtime:", "gemini-live:"];

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = !text;
}

function setStatus(text) {
  $("status").textContent = text;
}

// Connect's steps, shown as they pass with the seconds spent on each: the first session can take
// several seconds while the server starts the backend (the local model's servers) and its models.
const CONNECT_STEPS = ["asking for the camera and microphone", "connecting to the server",
  "the server is loading the backend and speech models (the first session takes longest)"];

function showStep(index) {
  clearInterval(state.stepTimer);
  const started = performance.now();
  const draw = () => {
    const seconds = Math.floor((performance.now() - started) / 1000);
    $("progress").textContent = `Connecting, step ${index + 1} of ${CONNECT_STEPS.length}: ` +
      `${CONNECT_STEPS[index]}${seconds ? ` (${seconds} s)` : ""}`;
  };
  draw();
  $("progress").hidden = false;
  $("speech").textContent = "connecting: the steps are shown above";
  $("speech").classList.remove("active");
  state.stepTimer = setInterval(draw, 500);
}

function endSteps() {
  clearInterval(state.stepTimer);
  state.stepTimer = null;
  $("progress").hidden = true;
}

// The line under the settings when nobody is speaking: what the page waits for.
function showIdle() {
  const line = $("speech");
  line.classList.remove("active");
  if (!state.ready) line.textContent = "not connected: choose the settings and press Connect";
  else if ($("mode").value === "push-to-talk") line.textContent = "connected: hold the talk button while you speak";
  else line.textContent = "connected: listening, speak when you are ready";
}

function clock() {
  return performance.now() - state.t0;
}

function fillSelect(select, values, labels = values) {
  select.replaceChildren(...values.map((value, i) => new Option(labels[i], value)));
}

async function loadInfo() {
  const response = await fetch("/v1/info");
  if (!response.ok) throw new Error(`the server's /v1/info answered ${response.status}`);
  state.info = await response.json();
  fillSelect($("backend"), state.info.backends);
  fillSelect($("describer"), state.info.describers);
  fillSelect($("condition"), state.info.conditions.map((c) => c.name),
    state.info.conditions.map((c) => `${c.name}: ${c.description || ""}`.replace(/: $/, "")));
  $("token-row").hidden = !state.info.token_required;
  updateSpokenChoice();
  if (state.info.recording) {
    $("tab-studio").hidden = false;
    setupStudio(state.info, () => state.stream, showError);
  }
}

// Spoken replies need a realtime backend: the checkbox is off for the others.
function updateSpokenChoice() {
  const realtime = REALTIME_PREFIXES.some((prefix) => $("backend").value.startsWith(prefix));
  $("spoken").disabled = !realtime;
  if (!realtime) $("spoken").checked = false;
}

async function startMedia() {
  if (state.stream) return state.stream;
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    throw new Error("this browser gives no camera or microphone here (a page not on https or localhost cannot ask)");
  }
  state.stream = await navigator.mediaDevices.getUserMedia({
    video: { width: 640, height: 480 },
    audio: { channelCount: 1, echoCancellation: true, noiseSuppression: true },
  });
  $("preview").srcObject = state.stream;
  return state.stream;
}

async function startAudio(send) {
  const context = new AudioContext();
  await context.audioWorklet.addModule("/web/pcm-worklet.js");
  const source = context.createMediaStreamSource(state.stream);
  const node = new AudioWorkletNode(context, "pcm16-downsampler");
  // Audio is stamped on the microphone's own clock (samples so far, 16 a millisecond) from the
  // first chunk: chunks reach this thread in bursts, and the server reads a jump in the stamps as
  // audio lost on the way, which it fills with silence.
  let first = null;
  let samplesSoFar = 0;
  node.port.onmessage = (event) => {
    const samples = new Int16Array(event.data);
    if (first === null) first = clock();
    const t = first + samplesSoFar / 16;
    samplesSoFar += samples.length;
    let peak = 0;
    for (const s of samples) peak = Math.max(peak, Math.abs(s));
    $("level").style.width = `${Math.min(100, (peak / 32767) * 300)}%`;
    const handsFree = $("mode").value === "hands-free";
    if (handsFree || state.talking) send(wire.encodeMedia(wire.KIND_AUDIO, t, new Uint8Array(event.data)));
  };
  source.connect(node);
  state.audio = { context, node, source };
}

function startFrames(send) {
  const [width, height] = $("size").value.split("x").map(Number);
  const canvas = $("grab");
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext("2d");
  state.frameTimer = setInterval(() => {
    const video = $("preview");
    if (video.readyState < 2) return;
    context.drawImage(video, 0, 0, width, height);
    const t = clock();
    canvas.toBlob(async (blob) => {
      if (blob && state.ws && state.ws.readyState === WebSocket.OPEN) {
        send(wire.encodeMedia(wire.KIND_FRAME, t, new Uint8Array(await blob.arrayBuffer())));
      }
    }, "image/jpeg", 0.8);
  }, 1000 / Number($("fps").value));
}

function stopStreaming() {
  clearInterval(state.frameTimer);
  state.frameTimer = null;
  if (state.audio) {
    state.audio.source.disconnect();
    state.audio.context.close();
    state.audio = null;
  }
}

function turnCard(turn) {
  if (!state.turns[turn]) {
    const li = document.createElement("li");
    li.dataset.turn = turn;
    li.innerHTML = `<div class="heard"></div><div class="camera-block"></div><div class="voice" hidden></div><div class="reply"></div><div class="latency"></div>`;
    $("turns").prepend(li);
    state.turns[turn] = li;
  }
  return state.turns[turn];
}

// A proactive remark (speak up): the assistant spoke without being asked.
function remarkCard(probe) {
  const key = `remark-${probe}`;
  if (!state.turns[key]) {
    const li = document.createElement("li");
    li.className = "remark";
    li.dataset.probe = probe;
    li.innerHTML = `<div class="heard">unasked: the assistant spoke up</div><div class="reply"></div>`;
    $("turns").prepend(li);
    state.turns[key] = li;
  }
  return state.turns[key];
}

// a spoken remark's pieces, back to back on the reply player's audio clock
function playRemark(event) {
  const context = player.context;
  if (!context) return;
  const samples = pcm16ToFloat32(event.audio);
  const buffer = context.createBuffer(1, samples.length, event.rate);
  buffer.copyToChannel(samples, 0);
  const source = context.createBufferSource();
  source.buffer = buffer;
  source.connect(context.destination);
  state.remarkAt = Math.max(state.remarkAt || 0, context.currentTime + 0.05);
  source.start(state.remarkAt);
  state.remarkAt += buffer.duration;
}

// the counter counts the cards: a remark's card appears with its first words, before its probe.done
function showWatching() {
  const looks = state.looks;
  const spoke = Object.keys(state.turns).filter((key) => key.startsWith("remark-")).length;
  const asked = Math.max(looks.asked, looks.silent + spoke);
  $("watching").hidden = false;
  $("watching").textContent = `speaking up: the assistant looked ${asked} time${asked === 1 ? "" : "s"}, ` +
    `stayed quiet ${looks.silent}, spoke up ${spoke}` +
    (looks.paced ? "; the server skips looks that come too often" : "");
}

function badge(source) {
  const span = document.createElement("span");
  span.className = `badge ${source || "none"}`;
  span.textContent = source || "no camera block";
  return span;
}

// a speaker drawn inline (no emoji font needed); its waves pulse while speaking
const SPEAKER_ICON = `<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
  <path d="M2 6h3l4-3v10l-4-3H2z" fill="currentColor"/>
  <path class="waves" d="M11 5.5a3.5 3.5 0 0 1 0 5M12.5 3.5a6.5 6.5 0 0 1 0 9" stroke="currentColor" fill="none" stroke-width="1.4"/>
</svg>`;
const VOICE_LABELS = { speaking: "speaking the reply", spoken: "spoken reply", interrupted: "spoken reply, cut short" };

// The speaker line above a spoken reply: speaking now, spoken, or cut short.
function showVoice(turn, status) {
  const voice = turnCard(turn).querySelector(".voice");
  voice.hidden = false;
  voice.className = `voice ${status}`;
  voice.innerHTML = `${SPEAKER_ICON}<span>${VOICE_LABELS[status]}</span>`;
}

// The player works out how much of a reply was heard and sends the cut before it shows the reply
// cut short; the API's conversation then keeps only what was heard (OpenAI Realtime truncates the reply).
const player = new ReplyPlayer(showVoice, (turn, playedMs) => {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(wire.replyCut(turn, playedMs));
});

function onEvent(event) {
  switch (event.type) {
    case "ready":
      endSteps();
      state.ready = true;
      $("talk").disabled = false; // push to talk once the session is ready to hear
      setStatus(`connected: ${event.backend}`);
      showIdle();
      break;
    case "speech.started":
      // the user talks over the reply: with barge-in the replies to every turn asked so far are over
      // (the server cancels them), their audio still on its way too; without it what plays stops
      if (state.bargeIn) player.bargeIn(state.asked);
      else player.stop();
      $("speech").textContent = "speech started";
      $("speech").classList.add("active");
      break;
    case "transcript.partial":
      $("partial").textContent = event.text;
      break;
    case "transcript.final": {
      state.asked = Math.max(state.asked, event.turn);
      showIdle();
      $("partial").textContent = "";
      turnCard(event.turn).querySelector(".heard").textContent = `Turn ${event.turn}, heard: ${event.text}`;
      break;
    }
    case "camera.block": {
      const box = turnCard(event.turn).querySelector(".camera-block");
      box.replaceChildren(document.createTextNode(`[Camera: ${event.text ?? "(none)"}]`), badge(event.source));
      if (event.context) box.append(document.createTextNode(`\nbefore speech: [Camera: ${event.context}]`), badge(event.context_source));
      break;
    }
    case "assistant.delta":
      turnCard(event.turn).querySelector(".reply").textContent += event.text;
      break;
    case "assistant.audio":
      player.play(event);
      break;
    case "assistant.done":
      turnCard(event.turn).querySelector(".reply").textContent =
        event.interrupted ? `${event.text} [cut short: you spoke]` : event.text;
      break;
    case "metrics": {
      const l = event.latency_s;
      const s = (v) => (v == null ? "n/a" : `${v.toFixed(2)} s`);
      turnCard(event.turn).querySelector(".latency").textContent =
        `from the end of speech: transcript ${s(l.speech_end_to_transcript_final)}, camera block ` +
        `${s(l.speech_end_to_camera_block)}, first word ${s(l.speech_end_to_first_token)}, ` +
        (l.speech_end_to_first_audio == null ? "" : `first audio ${s(l.speech_end_to_first_audio)}, `) +
        `reply done ${s(l.speech_end_to_reply_done)}`;
      break;
    }
    case "remark.delta":
      remarkCard(event.probe).querySelector(".reply").textContent += event.text;
      showWatching();
      break;
    case "probe.paced":
      state.looks.paced = true;
      showWatching();
      break;
    case "remark.audio":
      playRemark(event);
      break;
    case "probe.done":
      state.looks.asked += 1;
      if (event.silent) state.looks.silent += 1;
      else remarkCard(event.probe).querySelector(".reply").textContent = event.text;
      showWatching();
      break;
    case "error":
      showError(`The server says ${event.code}: ${event.message}`);
      break;
    default:
      break;
  }
}

async function connect(submitEvent) {
  submitEvent.preventDefault();
  showError("");
  if ($("speak-up").checked && $("frame-policy").value === "end") {
    showError("Speak up needs frames while you are quiet: choose a frame policy other than end.");
    return;
  }
  if ($("spoken").checked) player.unlock(); // now, while the click still counts as a user gesture
  $("connect").disabled = true;
  showStep(0);
  try {
    await startMedia();
  } catch (err) {
    endSteps();
    $("connect").disabled = false;
    showError(`Camera or microphone unavailable: ${err.message}`);
    return;
  }
  const condition = state.info.conditions.find((c) => c.name === $("condition").value);
  const config = {
    backend: $("backend").value,
    describer: $("describer").value,
    system_prompt: condition ? condition.system_prompt : "",
    partials: true,
    barge_in: $("barge-in").checked,
    // a person at the laptop, not the bank's scripted pauses: a shorter silence than the server's default
    silence_ms: 600,
  };
  if ($("spoken").checked) config.output = "audio";
  if ($("frame-policy").value) config.frame_policy = $("frame-policy").value;
  if ($("camera-conditions").value) config.camera_conditions = $("camera-conditions").value;
  if ($("speak-up").checked) config.proactive = "change";
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  const ws = new WebSocket(`${scheme}://${location.host}/v1/session`);
  ws.binaryType = "arraybuffer";
  state.ws = ws;
  state.turns = {};
  state.asked = 0; // the newest turn asked (its final transcript came)
  state.bargeIn = config.barge_in;
  state.looks = { asked: 0, silent: 0, paced: false };
  $("watching").hidden = true;
  player.reset();
  $("turns").replaceChildren();
  setStatus("connecting");
  showStep(1);
  const send = (data) => { if (ws.readyState === WebSocket.OPEN) ws.send(data); };
  ws.onopen = async () => {
    state.t0 = performance.now();
    ws.send(wire.hello($("token").value, config));
    showStep(2); // the server answers `ready` once the backend and models are up
    await startAudio(send);
    startFrames(send);
    $("disconnect").disabled = false;
    $("talk").hidden = $("mode").value !== "push-to-talk";
  };
  ws.onmessage = (message) => {
    try {
      onEvent(wire.decodeEvent(message.data));
    } catch (err) {
      showError(`Unreadable message from the server: ${err.message}`);
    }
  };
  ws.onclose = (close) => {
    stopStreaming();
    player.stop();
    endSteps();
    state.ready = false;
    releaseTalk();
    showIdle();
    const why = wire.CLOSE_REASONS[close.code] || `close code ${close.code}`;
    setStatus(`not connected (${why})`);
    if (close.code !== 1000) showError(`The connection closed: ${why}${close.reason ? `: ${close.reason}` : ""}. Press Connect to try again.`);
    $("connect").disabled = false;
    $("disconnect").disabled = true;
    $("talk").disabled = true;
  };
}

// The push-to-talk button: while held it is green and pressed, says to release it, and the line
// under the settings says the microphone is on; released, the turn ends.
function releaseTalk() {
  const talk = $("talk");
  state.talking = false;
  talk.classList.remove("held");
  talk.setAttribute("aria-pressed", "false");
  talk.textContent = "Hold to talk";
}

function setupTalkButton() {
  const talk = $("talk");
  const start = (event) => {
    if (talk.disabled) return;
    if (event.pointerId !== undefined) talk.setPointerCapture(event.pointerId);
    state.talking = true;
    talk.classList.add("held");
    talk.setAttribute("aria-pressed", "true");
    talk.textContent = "Talking: release to send";
    $("speech").textContent = "listening while you hold the button";
    $("speech").classList.add("active");
  };
  const stop = () => {
    if (!state.talking) return;
    releaseTalk();
    if (state.ws && state.ws.readyState === WebSocket.OPEN) {
      state.ws.send(wire.turnEnd(clock()));
      $("speech").textContent = "sent: waiting for the transcript";
      $("speech").classList.remove("active");
    }
  };
  talk.addEventListener("pointerdown", start);
  talk.addEventListener("pointerup", stop);
  talk.addEventListener("pointercancel", stop);
  talk.addEventListener("lostpointercapture", stop);
  $("mode").addEventListener("change", () => {
    talk.hidden = $("mode").value !== "push-to-talk";
    if (talk.hidden) stop();
    if (!state.talking) showIdle();
  });
}

function setupTabs() {
  for (const [tab, panel] of [["tab-live", "live"], ["tab-studio", "studio"]]) {
    $(tab).addEventListener("click", async () => {
      for (const [t, p] of [["tab-live", "live"], ["tab-studio", "studio"]]) {
        $(t).classList.toggle("active", t === tab);
        $(p).hidden = p !== panel;
      }
      if (panel === "studio") {
        try { await startMedia(); } catch (err) { showError(`Camera or microphone unavailable: ${err.message}`); }
      }
    });
  }
}

$("settings").addEventListener("submit", connect);
$("backend").addEventListener("change", updateSpokenChoice);
$("disconnect").addEventListener("click", () => {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(wire.sessionEnd());
});
setupTalkButton();
setupTabs();
loadInfo().catch((err) => showError(`Cannot reach the server: ${err.message}`));
