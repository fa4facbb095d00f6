from benchmark.candidates.base import Candidate, GenerationConfig, Image, Message, Reply, Usage

__all__ = ["Candidate", "GenerationConfig", "Image", "Message", "Reply", "Usage"]
