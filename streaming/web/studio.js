// The recording studio: record a scenario's steps (context, Turn 1, Turn 2,
// the repair) from the camera and microphone, redo any, and save each to the
// server, which writes it into the media layout (`media/<id>/...`).

const $ = (id) => document.getElementById(id);

function recorderType() {
  for (const type of ["video/webm;codecs=vp8,opus", "video/webm"]) {
    if (window.MediaRecorder && MediaRecorder.isTypeSupported(type)) return type;
  }
  return "";
}

function stepItem(scenarioId, step, getStream, showError) {
  const li = document.createElement("li");
  li.dataset.step = step.name;
  const title = { context: "Before the conversation", turn_1: "Turn 1", turn_2: "Turn 2", turn_3_repair: "The repair (Turn 3)" }[step.name];
  li.innerHTML = `<b></b><div class="say"></div><div class="shows"></div>
    <button type="button" class="record">Record</button> <button type="button" class="save" disabled>Save</button>
    <video class="take" controls hidden></video> <span class="saved"></span>`;
  li.querySelector("b").textContent = title;
  li.querySelector(".say").textContent = step.say ? `Say: "${step.say}"` : "Say nothing: the camera only.";
  li.querySelector(".shows").textContent = step.camera ? `The camera shows: ${step.camera}` : "The camera may show anything.";
  let recorder = null;
  let take = null;
  const record = li.querySelector(".record");
  const save = li.querySelector(".save");
  record.addEventListener("click", () => {
    if (recorder && recorder.state === "recording") {
      recorder.stop();
      return;
    }
    const stream = getStream();
    if (!stream) {
      showError("Allow the camera and microphone first (open this tab again).");
      return;
    }
    const chunks = [];
    recorder = new MediaRecorder(stream, { mimeType: recorderType() });
    recorder.ondataavailable = (event) => { if (event.data.size) chunks.push(event.data); };
    recorder.onstop = () => {
      take = new Blob(chunks, { type: recorder.mimeType || "video/webm" });
      const video = li.querySelector(".take");
      video.src = URL.createObjectURL(take);
      video.hidden = false;
      record.textContent = "Redo";
      save.disabled = false;
    };
    recorder.start(250);
    record.textContent = "Stop";
    save.disabled = true;
  });
  save.addEventListener("click", async () => {
    save.disabled = true;
    const token = $("token") ? $("token").value : "";
    const response = await fetch(`/v1/record?scenario=${encodeURIComponent(scenarioId)}&step=${step.name}`, {
      method: "POST", body: take, headers: { "Content-Type": take.type, ...(token ? { "X-Wearsim-Token": token } : {}) },
    });
    const answer = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
    if (!response.ok) {
      showError(`Saving ${title} failed: ${answer.error || response.status}`);
      save.disabled = false;
      return;
    }
    li.querySelector(".saved").textContent = `saved: ${answer.files.join(", ")}`;
  });
  return li;
}

export function setupStudio(info, getStream, showError) {
  const select = $("scenario");
  select.replaceChildren(...info.scenarios.map((s) => new Option(`${s.scenario_id} (${s.activity_domain})`, s.scenario_id)));
  const show = () => {
    const scenario = info.scenarios.find((s) => s.scenario_id === select.value);
    $("steps").replaceChildren(...scenario.steps.map((step) => stepItem(scenario.scenario_id, step, getStream, showError)));
  };
  select.addEventListener("change", show);
  show();
}
