"""Which of the embedded model's servers answers a request (`candidates.local.LocalModel`): a
conversation goes back to the server whose llama.cpp context holds it, and a proactive probe does not
take a server holding someone's spoken conversation while another server is free of one."""

import asyncio

from candidates.local import SPOKEN_KEEP_S, LocalModel
from core.candidate import GenerationConfig, Message, Reply

TURN = GenerationConfig()
PROBE = GenerationConfig(probe=True)


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Server:
    """A client that answers at once, or when `gate` is set, and records what it was asked."""

    endpoint = "local:test.gguf"

    def __init__(self, name: str):
        self.name, self.asked, self.primed, self.gate = name, [], [], None

    async def respond(self, messages, system, config, on_delta=None):
        if not messages:  # primed with the system prompt alone
            self.primed.append((system, config.max_tokens))
            return Reply(text=".", model="local")
        self.asked.append([m.text for m in messages])
        if self.gate is not None:
            await self.gate.wait()
        return Reply(text=f"{self.name} answers {messages[-1].text}", model="local")

    async def aclose(self):
        return None


def model(count=2):
    clock = Clock()
    servers = [Server(f"s{n}") for n in range(count)]
    return LocalModel("local", servers, clock=clock), servers, clock


async def ask(local, history, text, config=TURN, system="sys"):
    """`text` asked after `history` (a conversation's messages so far), which gains both."""
    history.append(Message(role="user", text=text))
    reply = await local.respond(list(history), system, config)
    history.append(Message(role="assistant", text=reply.text))
    for _ in range(3):  # a priming it started answers meanwhile
        await asyncio.sleep(0)
    return reply


def test_a_conversation_goes_back_to_the_server_that_holds_it():
    local, (s0, s1), clock = model()
    user, other = [], []

    async def run():
        await ask(local, user, "what is this?")
        await ask(local, other, "and this?")  # a new conversation: the server primed meanwhile
        clock.now += 1
        await ask(local, user, "and now?")
        await ask(local, other, "and then?")

    asyncio.run(run())
    assert s0.asked == [["what is this?"], ["what is this?", "s0 answers what is this?", "and now?"]]
    assert s1.asked == [["and this?"], ["and this?", "s1 answers and this?", "and then?"]]


def test_a_different_system_prompt_is_a_different_conversation():
    local, (s0, s1), _ = model()
    history = []

    async def run():
        await ask(local, history, "hello", system="one")
        await ask(
            local,
            [Message(role="user", text="hello"), Message(role="assistant", text="s0 answers hello")],
            "more",
            system="two",
        )

    asyncio.run(run())
    assert len(s0.asked) == 1 and s1.asked == [["hello", "s0 answers hello", "more"]]


def test_probes_leave_a_spoken_conversation_on_its_server():
    local, (s0, s1), clock = model()
    user = []
    racers = [[] for _ in range(6)]

    async def run():
        await ask(local, user, "what is in the pot?")
        for n, racer in enumerate(racers):  # six other sessions probe between the user's turns
            clock.now += 1
            await ask(local, racer, f"probe {n}", PROBE)
        clock.now += 1
        await ask(local, user, "is it ready?")

    asyncio.run(run())
    assert [len(a) for a in s0.asked] == [1, 3]  # the user's two turns, and no probe between them
    assert len(s1.asked) == 6


def test_without_the_probe_mark_the_least_recently_used_server_is_taken():
    """The same six requests as other users' turns take the least recently used server in turn, so
    the first user's conversation is evicted: the probe mark is what keeps it."""
    local, (s0, s1), clock = model()
    user = []

    async def run():
        await ask(local, user, "what is in the pot?")
        for n in range(6):
            clock.now += 1
            await ask(local, [], f"turn {n}")
        clock.now += 1
        await ask(local, user, "is it ready?")

    asyncio.run(run())
    assert sum(1 for a in s0.asked if a[0].startswith("turn")) == 3


def test_a_probe_waits_for_its_own_server_rather_than_evict_a_spoken_conversation():
    local, (s0, s1), clock = model()
    user = []

    async def run():
        await ask(local, user, "what is in the pot?")  # s0 holds the user's conversation
        s1.gate = asyncio.Event()
        first = asyncio.create_task(ask(local, [], "probe a", PROBE))
        await asyncio.sleep(0)
        second = asyncio.create_task(ask(local, [], "probe b", PROBE))  # s1 is busy, s0 free: still s1
        await asyncio.sleep(0)
        s1.gate.set()
        await asyncio.gather(first, second)

    asyncio.run(run())
    assert len(s0.asked) == 1 and [a[-1] for a in s1.asked] == ["probe a", "probe b"]


def test_a_quiet_spoken_conversation_no_longer_holds_its_server():
    local, (s0, s1), clock = model()

    async def run():
        await ask(local, [], "what is in the pot?")  # s0 holds it
        s1.gate = asyncio.Event()
        busy = asyncio.create_task(ask(local, [], "probe a", PROBE))  # s1, and it stays busy
        await asyncio.sleep(0)
        clock.now += SPOKEN_KEEP_S + 1  # the user has gone quiet
        await ask(local, [], "probe b", PROBE)  # s0 is free and its conversation stale: s0 takes it
        s1.gate.set()
        await busy

    asyncio.run(run())
    assert [a[-1] for a in s0.asked] == ["what is in the pot?", "probe b"]


def test_when_every_server_holds_a_spoken_conversation_a_probe_takes_the_least_busy():
    local, (s0, s1), clock = model()

    async def run():
        await ask(local, [], "what is in the pot?")
        clock.now += 1
        await ask(local, [], "what is on the table?")
        clock.now += 1
        await ask(local, [], "probe a", PROBE)  # both hold a spoken one: the least recently used, s0

    asyncio.run(run())
    assert [a[-1] for a in s0.asked] == ["what is in the pot?", "probe a"]


def test_a_conversation_stays_spoken_through_its_own_probes():
    """A proactive session whose user spoke: its own probe continues its conversation on its server,
    and another session's probe still keeps off it."""
    local, (s0, s1), clock = model()
    user = []

    async def run():
        await ask(local, user, "tell me when the water boils")  # s0, spoken
        s1.gate = asyncio.Event()
        clock.now += 1
        other = asyncio.create_task(ask(local, [], "probe a", PROBE))  # s1, and it stays busy
        await asyncio.sleep(0)
        clock.now += 1
        await ask(local, user, "the user's own probe", PROBE)  # continues on s0
        clock.now += 1
        late = asyncio.create_task(ask(local, [], "probe b", PROBE))  # s0 is free but still spoken: s1
        await asyncio.sleep(0)
        s1.gate.set()
        await asyncio.gather(other, late)

    asyncio.run(run())
    assert [a[-1] for a in s0.asked] == ["tell me when the water boils", "the user's own probe"]
    assert [a[-1] for a in s1.asked] == ["probe a", "probe b"]


def test_the_first_request_primes_the_idle_servers_and_the_next_user_starts_on_one():
    """One user after another (bench --via stream, a demo restarted): the first request primes every server
    that has answered nothing with its system prompt, so the second session's first turn goes to a server
    whose context holds that prompt instead of one evaluating it whole (0.5 s more to the first token,
    benchmarks/streaming.py --sessions 1), and the first user's conversation stays where it is."""
    local, (s0, s1), clock = model()
    first, second = [], []

    async def run():
        await ask(local, first, "what is this?")
        await ask(local, first, "and now?")
        clock.now += 5  # the first session has ended; its conversation is still recent
        await ask(local, second, "where are my keys?")
        await ask(local, second, "and the phone?")
        await ask(local, [], "something new", system="other")  # only a server that answered nothing is primed

    asyncio.run(run())
    assert s1.primed == [("sys", 1)] and s0.primed == []
    assert [a[-1] for a in s0.asked] == ["what is this?", "and now?", "something new"]
    assert [a[-1] for a in s1.asked] == ["where are my keys?", "and the phone?"]


def test_a_server_that_fails_its_priming_holds_nothing():
    local, (s0, s1), _ = model()

    async def fail(messages, system, config, on_delta=None):
        raise RuntimeError("the server is gone")

    s1.respond = fail

    async def run():
        await ask(local, [], "what is this?")
        assert local._in_flight == [0, 0]
        await local.aclose()

    asyncio.run(run())
    assert local._held[1] is None


def test_a_turn_prefilled_in_the_silence_waits_on_that_server_and_continues_it():
    """The streaming session's prefill (`LocalModel.prefill`) evaluates the turn's prompt on the server that
    holds the conversation; the turn's request, asked while that still runs, goes to the same server (where it
    waits behind it) rather than to the idle one, and the prefill's one-token reply is not part of what the
    server is said to hold."""
    local, (s0, s1), clock = model()
    user = []

    async def run():
        await ask(local, user, "what is this?")
        clock.now += 1
        turn = [*user, Message(role="user", text="and now?")]
        s0.gate = asyncio.Event()
        prefill = asyncio.create_task(local.prefill(turn, "sys"))
        await asyncio.sleep(0)
        asked = asyncio.create_task(local.respond(turn, "sys", TURN))  # the turn ends while the prefill runs
        await asyncio.sleep(0)
        s0.gate.set()
        await asyncio.gather(prefill, asked)
        await local.prefill(turn + [Message(role="assistant", text="s0 answers and now?")], "sys")  # held: no-op

    asyncio.run(run())
    assert [a[-1] for a in s0.asked] == ["what is this?", "and now?", "and now?"]  # the prefill, then the turn
    assert s1.asked == []


def test_a_turn_prefilled_before_its_words_continues_on_that_server_with_them():
    """Under the text end of turn the session prefills the turn's camera block before the words are decoded
    (the user message without them); the turn with its words is that server's conversation continued, so the
    prefill with the words and the turn's request go there too, not to the idle server."""
    local, (s0, s1), clock = model()
    user = []

    async def run():
        await ask(local, user, "what is this?")
        clock.now += 1
        without_words = [*user, Message(role="user", text="[Camera: a mug]\n")]
        with_words = [*user, Message(role="user", text="[Camera: a mug]\nand now?")]
        await local.prefill(without_words, "sys")
        await local.prefill(with_words, "sys")
        await local.respond(with_words, "sys", TURN)
        other = [*user, Message(role="user", text="[Camera: a cup]\nand now?")]  # not the start of it
        assert not local._continues(0, other, "sys")

    asyncio.run(run())
    assert [a[-1] for a in s0.asked] == ["what is this?", "[Camera: a mug]\n", *["[Camera: a mug]\nand now?"] * 2]
    assert s1.asked == []
