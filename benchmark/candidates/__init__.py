from benchmark.candidates.base import Candidate, GenerationConfig, Image, Message, Reply, Usage
from benchmark.candidates.factory import open_candidate
from benchmark.candidates.model_ids import candidate_family, default_model_id, parse_model_id

__all__ = [
    "Candidate", "GenerationConfig", "Image", "Message", "Reply", "Usage",
    "candidate_family", "default_model_id", "open_candidate", "parse_model_id",
]
