"""The resumable async runner behind `wearsim bench`, one concern a module.

Cells are (condition, scenario, trial, place on the stream's sweep axes). Each finished trial is appended to
`transcripts.jsonl` and flushed to disk at once, so a killed run loses only the cells in flight; rerunning
into the same directory skips finished cells and refuses a directory made with a different bank, model or
any other setting that changes a result (`manifest.RESUME_KEYS`).

- `settings`: `RunSettings` in named parts, built by the CLI, and the sweep points a cell runs at
- `outputs`: the names of what a run writes into its dir
- `errors`: why a run dir cannot be used or a run stopped
- `manifest`: `manifest.json`, and which of its fields must match for a resume
- `lock`: one process writes a run dir at a time
- `run_dir`: a run dir locked and checked before anything is written, and started
- `reply_audio`: spoken replies and remarks saved as WAVs
- `writers`: `transcripts.jsonl` and `cache_log.jsonl`, a line at a time
- `progress`: the progress line on stderr
- `budget_file`: the run's `--budget` and its `budget.json`
- `cell`: one cell played, judged and turned into its record
- `runner`: `run_bench`, every unfinished cell of a run
"""
