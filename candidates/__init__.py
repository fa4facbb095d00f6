"""The model adapters: every model a run can talk to (chat APIs, the embedded llama.cpp server, recorded
replies, the realtime APIs and their live session owner), with retries, rate limits, the response cache,
usage parsing and model ids. Imports only `core`."""

from candidates.factory import open_candidate
from candidates.model_ids import candidate_family, default_model_id, parse_model_id
from core.candidate import Candidate, GenerationConfig, Image, Message, Reply, Usage

__all__ = [
    "Candidate",
    "GenerationConfig",
    "Image",
    "Message",
    "Reply",
    "Usage",
    "candidate_family",
    "default_model_id",
    "open_candidate",
    "parse_model_id",
]
