"""Does an utterance sound finished? The learned end-of-turn model.

Smart Turn v3.2 (Daily, BSD-2-Clause) is a small Whisper-encoder classifier
shipped as a CPU ONNX file inside the `pipecat-ai` wheel. We read the file
only: `scripts/setup.sh` installs that wheel without its dependencies, and
`model_path()` finds the file from the package's location without importing
pipecat. The model takes Whisper log-mel features (80 bins, 100 frames a
second) of the last 8 s of 16 kHz audio, zeros in front of a shorter clip,
the waveform first scaled to zero mean and unit variance; it returns the
probability that the speaker has finished.

One `TurnEndModel` is loaded per process (`shared_model()`) and used from
any thread: onnxruntime's `run` may be called concurrently, each call on one
thread, so a server's sessions never wait on each other's turn checks.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

import numpy as np

from media_effects.audio import SAMPLE_RATE

MODEL_SECONDS = 8  # the model hears at most the last 8 s
MODEL_SAMPLES = MODEL_SECONDS * SAMPLE_RATE
MODEL_FILE = ("audio", "turn", "smart_turn", "data", "smart-turn-v3.2-cpu.onnx")  # inside the pipecat package
MODEL_ENV = "WEARSIM_TURN_MODEL"  # another copy of the ONNX file
THRESHOLD = 0.5  # at or above: finished
_VARIANCE_FLOOR = 1e-7


def model_path() -> Path:
    """The Smart Turn ONNX file: `WEARSIM_TURN_MODEL`, else the installed pipecat-ai wheel's copy."""
    override = os.environ.get(MODEL_ENV)
    if override:
        path = Path(override)
        if not path.is_file():
            raise RuntimeError(f"{MODEL_ENV} names no file: {path}")
        return path
    spec = importlib.util.find_spec("pipecat")  # finds the package without running its __init__
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the end-of-turn model is missing: pip install --no-deps pipecat-ai==1.14.0 (scripts/setup.sh does)"
        )
    path = Path(list(spec.submodule_search_locations)[0]).joinpath(*MODEL_FILE)
    if not path.is_file():
        raise RuntimeError(
            f"the end-of-turn model is not in the installed pipecat-ai: {path} "
            "(pip install --no-deps pipecat-ai==1.14.0)"
        )
    return path


def model_input(audio: np.ndarray, extractor) -> np.ndarray:
    """(80, 800) log-mel features of the clip's last 8 s, zeros in front of a shorter clip."""
    clip = np.asarray(audio, dtype=np.float32)[-MODEL_SAMPLES:]
    clip = np.concatenate([np.zeros(MODEL_SAMPLES - len(clip), dtype=np.float32), clip])
    clip = (clip - clip.mean()) / np.sqrt(clip.var() + _VARIANCE_FLOOR)
    return extractor(clip, padding=0).astype(np.float32)


class TurnEndModel:
    """The end-of-turn classifier on onnxruntime, one CPU thread per call."""

    def __init__(self, path: Path | None = None):
        import onnxruntime
        from faster_whisper.feature_extractor import FeatureExtractor

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        self.path = path or model_path()
        self.session = onnxruntime.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
        self.input_name = self.session.get_inputs()[0].name
        self.extractor = FeatureExtractor(feature_size=80)

    def probability(self, audio: np.ndarray) -> float:
        """How likely the speaker has finished, from 16 kHz float audio ending now."""
        features = model_input(audio, self.extractor)[None]
        return float(np.asarray(self.session.run(None, {self.input_name: features})[0]).reshape(-1)[0])


_SHARED: TurnEndModel | None = None
_SHARED_LOCK = threading.Lock()


def shared_model() -> TurnEndModel:
    """The process's one end-of-turn model, loaded on first use."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = TurnEndModel()
        return _SHARED
