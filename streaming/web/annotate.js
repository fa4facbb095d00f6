// The labelling page (wearsim annotate): one item at a time, a label saved as it is given.
// Everything shown is set as text (never as markup): a reply may hold anything.

const $ = (selector) => document.querySelector(selector);
const state = { items: [], labels: {}, choices: [], index: 0, saving: false };

function showError(text) {
  $('#error').textContent = text;
  $('#error').hidden = !text;
}

function labelledCount() {
  return state.items.filter((item) => state.labels[item.key]).length;
}

function drawProgress() {
  const done = labelledCount();
  $('#progress').max = Math.max(1, state.items.length);
  $('#progress').value = done;
  $('#progress-text').textContent = `${done} of ${state.items.length} labelled`;
}

function drawRubricNotes(notes) {
  const box = $('#rubric-notes');
  box.replaceChildren();
  for (const note of notes || []) {
    const line = document.createElement('p');
    line.className = 'hint';
    line.textContent = note;
    box.append(line);
  }
}

function drawChoices() {
  const box = $('#choices');
  const definitions = $('#definitions');
  box.replaceChildren();
  definitions.replaceChildren();
  for (const choice of state.choices) {
    const button = document.createElement('button');
    button.type = 'button';
    button.dataset.label = choice.label;
    button.title = choice.definition;
    const key = document.createElement('kbd');
    key.textContent = choice.key;
    button.append(key, choice.text);
    button.addEventListener('click', () => give(choice.label));
    box.append(button);
    const term = document.createElement('dt');
    term.textContent = `${choice.key}: ${choice.text}`;
    const meaning = document.createElement('dd');
    meaning.textContent = choice.definition;
    definitions.append(term, meaning);
  }
}

function drawItem() {
  drawProgress();
  const allDone = state.items.length > 0 && labelledCount() === state.items.length;
  $('#done').hidden = !allDone;
  if (!state.items.length) {
    $('#position').textContent = 'this sample holds no item';
    return;
  }
  const item = state.items[state.index];
  const own = state.labels[item.key];
  $('#position').textContent = `item ${state.index + 1} of ${state.items.length}`;
  $('#scenario').textContent = item.scenario_id;
  $('#given').textContent = own ? `· your label: ${own.label.replace('_', ' ')}` : '· not labelled yet';
  $('#item').dataset.key = item.key;
  const sections = $('#sections');
  sections.replaceChildren();
  for (const part of item.sections) {
    // an assistant's earlier reply is folded (a <details>, closed): context no judge sees
    const folded = part.kind === 'earlier';
    const section = document.createElement(folded ? 'details' : 'section');
    section.className = `part ${part.kind}`;
    const title = document.createElement(folded ? 'summary' : 'h3');
    title.textContent = part.title;
    const text = document.createElement('pre');
    text.textContent = part.text;
    section.append(title, text);
    sections.append(section);
  }
  for (const button of document.querySelectorAll('#choices button')) {
    button.classList.toggle('given', Boolean(own) && own.label === button.dataset.label);
  }
  $('#note').value = own ? own.note : '';
  $('#back').disabled = state.index === 0;
}

function nextIndex() {
  // the next unlabelled item after this one (wrapping round), else simply the next one
  for (let step = 1; step <= state.items.length; step += 1) {
    const at = (state.index + step) % state.items.length;
    if (!state.labels[state.items[at].key]) return at;
  }
  return Math.min(state.index + 1, state.items.length - 1);
}

async function give(label) {
  if (state.saving || !state.items.length) return;
  const item = state.items[state.index];
  const note = $('#note').value;
  state.saving = true;
  $('#status').textContent = 'saving…';
  try {
    const response = await fetch('/v1/annotate/label', {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: item.key, label, note }),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
    state.labels[item.key] = { label, note };
    $('#status').textContent = `saved: ${label.replace('_', ' ')} (${answer.labelled} of ${state.items.length})`;
    showError('');
    state.index = nextIndex();
    drawItem();
  } catch (error) {
    showError(`not saved: ${error.message}`);
    $('#status').textContent = '';
  } finally {
    state.saving = false;
  }
}

function move(step) {
  if (!state.items.length) return;
  state.index = Math.min(Math.max(state.index + step, 0), state.items.length - 1);
  $('#status').textContent = '';
  drawItem();
}

document.addEventListener('keydown', (event) => {
  if (event.target === $('#note') || event.ctrlKey || event.metaKey || event.altKey) return;
  const choice = state.choices.find((c) => c.key === event.key.toLowerCase());
  if (choice) {
    event.preventDefault();
    give(choice.label);
  } else if (event.key === 'b' || event.key === 'ArrowLeft') {
    move(-1);
  } else if (event.key === 's' || event.key === 'ArrowRight') {
    move(1);
  } else if (event.key === '?') {
    $('#rubric').open = !$('#rubric').open;
  }
});
$('#back').addEventListener('click', () => move(-1));
$('#skip').addEventListener('click', () => move(1));

async function load() {
  try {
    const response = await fetch('/v1/annotate', { cache: 'no-store' });
    const data = await response.json();
    if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
    state.items = data.items;
    state.labels = data.labels;
    state.choices = data.choices;
    const what = { turn2: 'Turn 2 replies', turn3: 'Turn 3 replies (after the repair)', remarks: 'proactive remarks' };
    $('#who').textContent = `${data.annotator} · ${what[data.what] || data.what}`;
    const first = state.items.findIndex((item) => !state.labels[item.key]);
    state.index = first === -1 ? 0 : first;  // a visit resumes at the first item not yet labelled
    drawChoices();
    drawRubricNotes(data.rubric);
    drawItem();
    document.body.dataset.ready = 'true';
  } catch (error) {
    showError(`could not load the items: ${error.message}`);
  }
}

load();
