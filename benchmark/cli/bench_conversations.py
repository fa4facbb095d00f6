"""`wearsim bench`'s conversation factory: how each cell's trial talks to the candidate, through the text
proxy or through simulated glasses and a streaming server."""

from __future__ import annotations

import contextlib
import sys


@contextlib.asynccontextmanager
async def conversations(settings, base_url: str | None, run_dir):
    """The conversation factory of a run. Direct: the text proxy against the
    opened candidate. Stream: simulated glasses against `settings.stream.server`,
    or against a streaming server started in-process (its backend is the
    candidate). `base_url`: the candidate's endpoint as given (`--base-url`)."""
    from benchmark.conversations.protocol import DirectConversation
    from candidates import open_candidate
    from candidates.model_ids import is_realtime
    from core.candidate import GenerationConfig

    chosen = settings.candidate
    config = GenerationConfig(temperature=chosen.temperature, max_tokens=chosen.max_tokens)
    if settings.stream is None:
        async with open_candidate(
            chosen.model_id, base_url=base_url, log_dir=run_dir / "logs", output=chosen.output
        ) as candidate:
            if is_realtime(chosen.model_id):  # each trial in a live conversation of its own (never cached)
                from candidates.realtime import RealtimeCandidate

                assert isinstance(candidate, RealtimeCandidate)  # what the factory opens for a realtime id
                live = candidate
                yield lambda scenario, condition, _point, _trial, _cache: DirectConversation(
                    scenario,
                    condition,
                    live.conversation(),
                    config,
                    camera=settings.camera,
                    repair_style=settings.repair_style,
                    owns_candidate=True,
                )
            elif chosen.cached:  # a cached candidate asks for the cell: keyed by its trial, logged to it
                from candidates.cache import CachedCandidate, ResponseCache

                cached = CachedCandidate(candidate, ResponseCache(settings.cache_dir), role="candidate")
                yield lambda scenario, condition, _point, _trial, cache: DirectConversation(
                    scenario,
                    condition,
                    cached.for_cell(cache),
                    config,
                    camera=settings.camera,
                    repair_style=settings.repair_style,
                )
            else:
                yield lambda scenario, condition, _point, _trial, _cache: DirectConversation(
                    scenario, condition, candidate, config, camera=settings.camera, repair_style=settings.repair_style
                )
        return
    with _server(settings, base_url, run_dir) as url:
        yield _stream_factory(settings, url)


def _server(settings, base_url: str | None, run_dir):
    """The streaming server's URL: `--server`, or one started in-process for the run."""
    stream, chosen = settings.stream, settings.candidate
    if stream.server:
        return contextlib.nullcontext(stream.server)
    from streaming.local_server import running_server
    from streaming.server_settings import ServerSettings

    print(
        f"starting the streaming server in-process (Whisper, VAD, backend); its log: {run_dir / 'logs' / 'server.log'}",
        file=sys.stderr,
    )
    # room for every cell the run plays at once (`--concurrency`), never below the server's defaults
    return running_server(
        ServerSettings.with_room_for(
            settings.concurrency,
            backend_base_url=base_url,
            asr_model=stream.asr_model,
            describer_base_url=stream.describer_base_url,
            allowed_backends=(chosen.model_id,),
            allowed_describers=(settings.glasses.hello.describer,),
        ),
        log_path=run_dir / "logs" / "server.log",
    )


def _stream_factory(settings, url: str):
    """Each cell's simulated glasses against the server at `url`: a `WatchConversation` for a proactive
    scenario, else a `StreamConversation`; both play the run's `settings.glasses` with the cell's own."""
    import dataclasses

    from benchmark.conversations.stream import StreamConversation
    from benchmark.conversations.watch import WatchConversation
    from core.proactive_scenario import ProactiveScenario
    from core.scenes import read_timeline, scene_spec_in

    stream = settings.stream
    glasses = dataclasses.replace(settings.glasses, url=url)
    policies = {policy.name: policy for policy in stream.frame_policies}  # a sweep point names its policy
    profiles = {}
    if stream.impairments:
        from media_effects.impairment_profiles import select_profiles
        from simulator.timeline import cell_seed

        profiles = {p.name: p for p in select_profiles(stream.impairments, stream.impairments_file)}

    def conversation(scenario, condition, point, trial, _cache):
        if isinstance(scenario, ProactiveScenario):
            pictures = (
                read_timeline(stream.scene_dir, scenario.scenario_id, len(scenario.scenes))
                if stream.pictograph_frames
                else None
            )
            return WatchConversation(
                scenario,
                condition,
                glasses.asking(frame_policy=policies.get(point.frame_policy)),
                strategy=point.proactive,
                pictures=pictures,
            )
        cell = dataclasses.replace(
            glasses.asking(frame_policy=policies.get(point.frame_policy)),
            staleness_ms=point.staleness_ms,
            scenes=scene_spec_in(stream.scene_dir, scenario) if stream.pictograph_frames else None,
            impairment=profiles[point.impairment].with_seed(
                cell_seed(stream.impairment_seed, scenario.scenario_id, trial)
            )
            if point.impairment
            else None,
        )
        return StreamConversation(scenario, condition, cell, camera=settings.camera, repair_style=settings.repair_style)

    return conversation
