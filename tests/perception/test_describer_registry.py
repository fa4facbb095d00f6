"""The describer registry builds a local describer from its entry's `maker` ("module:Class"), and
names one default."""

from __future__ import annotations

import sys
import types

from perception.describer_spec import DEFAULT_DESCRIBER, DESCRIBERS, Describer, describer_problem, local_names
from perception.describers import Description, make_describer

FAKE_MODULE = "fake_describer"


class PlainDescriber:
    """Says the same of every frame."""

    name = "plain"
    model = "plain-words"

    async def describe(self, jpeg: bytes, previous: bytes | None = None) -> Description:
        return Description(text="A frame.", describer=self.name, model=self.model, cached=False, seconds=0.0)


def test_a_local_describer_added_to_the_registry_is_built_from_its_maker(monkeypatch):
    module = types.ModuleType(FAKE_MODULE)
    module.PlainDescriber = PlainDescriber  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, FAKE_MODULE, module)
    entry = Describer(name="plain", what="the same words for every frame", maker=f"{FAKE_MODULE}:PlainDescriber")
    monkeypatch.setitem(DESCRIBERS, "plain", entry)
    assert isinstance(make_describer("plain"), PlainDescriber)
    assert describer_problem("plain") is None


def test_one_entry_is_the_default_and_make_describer_builds_it():
    assert [d.name for d in DESCRIBERS.values() if d.default] == [DEFAULT_DESCRIBER]
    assert make_describer().name == DEFAULT_DESCRIBER


def test_each_local_describer_names_itself_as_its_entry():
    assert {name: make_describer(name).name for name in local_names()} == {name: name for name in local_names()}
