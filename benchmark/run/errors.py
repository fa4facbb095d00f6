"""Why a run dir cannot be used, or why a run stopped before its last cell."""

from __future__ import annotations

from candidates.realtime_base import MODEL_MISSING


class RunDirError(RuntimeError):
    """The output directory cannot be used for this run."""


class RunDirBusy(RunDirError):
    """Another process holds the run dir's lock."""


class TranscriptWriteError(RunDirError):
    """transcripts.jsonl could not be written (e.g. the disk is full); the run stopped."""


class ModelMissing(RuntimeError):
    """The provider says the model under test does not exist: every cell could only fail the
    same way, so the run stops (no record is written for the cell that found it out)."""

    @classmethod
    def from_error(cls, error: BaseException) -> ModelMissing | None:
        """The error a cell raised, when it is the provider's "no such model" (the adapter's
        `ModelNotFoundError`, directly or as the streaming server's error event's text)."""
        text = str(error)
        at = text.find(MODEL_MISSING)
        if at < 0:
            return None
        start = text.rfind(" ", 0, max(text.rfind(":", 0, at), 0)) + 1  # back to the model id before ": the provider"
        return cls(text[start:].strip() + "; nothing more was run")


def write_failed(path, exc: OSError) -> TranscriptWriteError:
    """The error of a run output that could not be written: what to do about it."""
    return TranscriptWriteError(
        f"cannot write {path}: {exc.strerror or exc}; the trials recorded so far are kept; "
        "free the space and rerun with --resume"
    )
