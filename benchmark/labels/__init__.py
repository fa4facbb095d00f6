"""People as the reference for the judge: what a person labels, how a sample
is drawn, where labels are kept, and how every judge is measured against them.

| module | what it holds |
|---|---|
| `items.py` | the items a person labels (`LabelItem`: a Turn 2 reply, a Turn 3 repair or a proactive remark, \
with what the rubric lets a judge see and, apart from it, the judge's label), their keys and viewer anchors |
| `sample.py` | the stratified sample by judge label and scenario, the same for every annotator \
with one seed; or the disagreement sample (the items the run's judge and the offline judge disagree on, \
or the offline judge is unsure of, first) |
| `store.py` | `RUN_DIR/labels/NAME.jsonl`: annotator names, reading (bounded, every problem naming file and \
line) and saving (temp file and rename) |
| `export.py` | the sample and its labels out: a Label Studio JSON export (and its labelling config) or a CSV |
| `exchange.py` | labels back in: a Label Studio JSON export (annotators by e-mail, name or an id map), a CSV |
| `agreement.py` | Cohen's and Fleiss' kappa, raw agreement, per-label precision and recall, intervals over \
scenarios, the people's majority (two people agreeing) |
| `verdict.py` | the one line `wearsim agreement` opens with: too few items to say (and how many more), or the \
judge's kappa in words |
| `agreement_report.py` | agreement.json, agreement.md, the confusion-matrix PNG, and the line findings \
and the viewer print |
| `refresh.py` | measure and write the agreement, then the report's human-check line (after an import, \
at the end of `wearsim annotate`) |
| `reference.py` | reference labels of four shapes (careful labels, a run's labels, Label Studio, CSV) read \
into items for `wearsim judge-check` |
| `figures.py` | a judge against reference labels: coverage, agreement, kappa, precision, recall, confusion |
| `check.py` | `wearsim judge-check`: every item judged, the figures as a dict and as text |
"""

WHATS = ("turn2", "turn3", "remarks")  # what can be labelled: Turn 2 replies, Turn 3 replies, proactive remarks
DEFAULT_SEED = 47  # the sample's seed when none is given: the same items for everyone
# how a label's item was drawn (`--sample N`, `--sample disagreements`): labels of the two are never pooled
SAMPLES = ("random", "disagreements")
