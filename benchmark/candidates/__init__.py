from benchmark.candidates.base import Candidate, GenerationConfig, Image, Message, Reply, Usage
from benchmark.candidates.factory import candidate_family, default_model_id, open_candidate, parse_model_id

__all__ = [
    "Candidate", "GenerationConfig", "Image", "Message", "Reply", "Usage",
    "candidate_family", "default_model_id", "open_candidate", "parse_model_id",
]
