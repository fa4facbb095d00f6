"""The embedded model's servers keep a displaced conversation aside and put it back
(`candidates/llama_memory.py`, installed by `local.py`'s boot): with the bundled SmolLM2, in process
and in the real server."""

from __future__ import annotations

import asyncio
import re

import numpy as np
import pytest

from candidates import GenerationConfig, Message, llama_memory
from candidates.local import LocalLlamaServer, bundled_gguf
from candidates.openai_chat import OpenAIChatCandidate

pytestmark = pytest.mark.xdist_group("local_llama")

SYSTEM = "<|im_start|>system\nYou are an assistant on smart glasses.<|im_end|>\n"
LONG = SYSTEM + "".join(
    f"<|im_start|>user\nWhat is item {i} on the table, the red one or the blue one?<|im_end|>\n"
    f"<|im_start|>assistant\nIt is the red cup number {i}, next to the plate and the small blue bowl.<|im_end|>\n"
    for i in range(8)
)
QUESTION = "<|im_start|>user\nAnd what is it now?<|im_end|>\n<|im_start|>assistant\n"
OTHER = SYSTEM + "<|im_start|>user\nTell me about the bicycle by the door.<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def model():
    import llama_cpp

    class Remembering(llama_cpp.Llama):  # the class the server's boot patches, here a copy of our own
        pass

    assert llama_memory.install(Remembering, llama_cpp)
    assert not llama_memory.install(Remembering, llama_cpp)  # once only
    llm = Remembering(str(bundled_gguf()), n_ctx=2048, n_threads=1, verbose=False)
    yield llm
    llm.close()


def complete(llm, prompt: str) -> str:
    return llm.create_completion(prompt, max_tokens=16, temperature=0)["choices"][0]["text"]


@pytest.mark.slow
def test_a_displaced_conversation_is_put_back_and_answers_as_if_it_never_left(model, monkeypatch):
    reused = []
    before = llama_memory.Memory.before

    def spy(self, llama, prompt):
        before(self, llama, prompt)  # then: what of the prompt the context already holds
        reused.append(llama_memory.shared(llama.input_ids[: llama.n_tokens], prompt))

    monkeypatch.setattr(llama_memory.Memory, "before", spy)
    long_tokens = len(model.tokenize(LONG.encode(), special=True))
    assert long_tokens > llama_memory.KEEP_FROM_TOKENS
    model.reset()
    cold = complete(model, LONG + QUESTION)
    complete(model, OTHER)  # another session's request displaces it
    memory = model._wearsim_memory
    assert len(memory.kept) == 1 and memory.used > 0
    warm = complete(model, LONG + QUESTION)
    assert warm == cold and warm.strip()
    assert reused[1] < 40  # the other session's prompt shares only the system text
    assert reused[2] >= long_tokens  # put back: only the question was left to evaluate
    assert not memory.kept  # the context holds it again; a short conversation is not copied


@pytest.mark.slow
def test_copies_stay_within_the_budget_and_no_copy_is_a_prefix_of_another(model):
    import llama_cpp

    model.reset()
    complete(model, LONG + QUESTION)
    one = llama_cpp.llama_state_get_size(model._ctx.ctx)
    held = model.input_ids[: model.n_tokens].copy()
    other = held + 1  # tokens that share no prefix with `held` (the state copied is the context's either way)

    memory = llama_memory.Memory(llama_cpp, budget=one * 3)
    memory._keep(model, held[: len(held) // 2])
    memory._keep(model, held)  # the longer replaces the shorter
    memory._keep(model, held[: len(held) // 2])  # and the shorter is not kept again beside it
    assert [len(tokens) for tokens, _, _ in memory.kept.values()] == [len(held)]

    memory = llama_memory.Memory(llama_cpp, budget=int(one * 1.5))
    memory._keep(model, held)
    memory._keep(model, other)  # two copies exceed the budget: the older goes
    assert [tokens[0] for tokens, _, _ in memory.kept.values()] == [other[0]]
    assert memory.used == one <= memory.budget
    small = llama_memory.Memory(llama_cpp, budget=one - 1)
    small._keep(model, held)
    assert not small.kept and small.used == 0  # a copy larger than the budget is not made


def test_the_shared_prefix():
    a = np.array([1, 2, 3, 4], dtype=np.intc)
    assert llama_memory.shared(a, np.array([1, 2, 9], dtype=np.intc)) == 2
    assert llama_memory.shared(a, a[:3]) == 3 and llama_memory.shared(a, np.array([], dtype=np.intc)) == 0


@pytest.mark.llama
def test_the_real_server_puts_a_displaced_conversation_back(tmp_path):
    """Through `LocalLlamaServer`'s boot: the third request's log line shows the whole first
    conversation reused, where without the memory only the system text would be."""
    long = [
        Message(
            role="user" if n % 2 == 0 else "assistant",
            text=f"What is item {n} on the table?" if n % 2 == 0 else f"It is the red cup number {n}, by the bowl.",
        )
        for n in range(16)
    ]
    config = GenerationConfig(max_tokens=12)

    async def talk(url):
        candidate = OpenAIChatCandidate("smollm2", base_url=url, api_key="x")
        await candidate.respond(long + [Message(role="user", text="And now?")], "Be brief.", config)
        await candidate.respond([Message(role="user", text="Tell me about the bicycle.")], "Be brief.", config)
        await candidate.respond(
            long
            + [
                Message(role="user", text="And now?"),
                Message(role="assistant", text="The cup."),
                Message(role="user", text="Which one?"),
            ],
            "Be brief.",
            config,
        )
        await candidate.aclose()

    with LocalLlamaServer(log_dir=tmp_path, threads=1) as server:
        asyncio.run(talk(server.base_url))
    log = (tmp_path / "llama_server.log").read_text()
    assert "wearsim: llama_cpp has no generate" not in log
    hits = [int(n) for n in re.findall(r"Llama.generate: (\d+) prefix-match hit", log)]
    assert len(hits) >= 2 and hits[-1] > 150, log[-2000:]


@pytest.mark.slow
def test_a_memory_that_fails_turns_itself_off_and_the_reply_still_comes(model, monkeypatch, capsys):
    def broken(self, llama, prompt):
        raise RuntimeError("no state calls here")

    model.reset()
    cold = complete(model, LONG + QUESTION)
    monkeypatch.setattr(llama_memory.Memory, "before", broken)
    assert complete(model, LONG + QUESTION) == cold
    assert model._wearsim_memory.working is False and "it is off for this server" in capsys.readouterr().out
    model._wearsim_memory.working = True
