"""Random interleavings of call, cancel, retry, delete, answer-lost, read and time for one URL:
Cooked never receives a second import while the first's outcome is unknown, or successful and kept.

In process, against the kept outcomes themselves (handlers/writes.py), a Cooked of a few lines and
a dispatcher that does what dispatch.py does: a call is received when it returns uncancelled. Every
step waits only for the event loop to run what is ready, so an example takes milliseconds.
"""

from __future__ import annotations

import asyncio
import itertools
import re
from dataclasses import dataclass, field, replace
from typing import Literal

import anyio
import anyio.lowlevel
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import cooked_mcp.handlers.writes as writes
from cooked_mcp.handlers.formatting import AnswerLost
from cooked_mcp.handlers.recipes import same_page
from cooked_mcp_runtime.results import ToolCall, ToolError, ToolResult

pytestmark = pytest.mark.anyio

URL = "https://example.org/recipes/property-stew"
Ending = Literal["saved", "refused", "lost"]
Step = tuple[str, Ending | None]


class Args(BaseModel):
    source: str
    url: str


class Out(BaseModel):
    recipe_id: str | None = None
    import_running: bool | None = None


@dataclass
class Cooked:
    """Imports wait until the test ends them: saved, refused (nothing made), or made with the answer lost."""

    recipes: set[str] = field(default_factory=set)
    waiting: list[asyncio.Future[Ending]] = field(default_factory=list)
    received: int = 0
    ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    async def import_url(self) -> ToolResult[Out]:
        self.received += 1
        ending = asyncio.get_running_loop().create_future()
        self.waiting.append(ending)
        match await ending:
            case "refused":
                raise ToolError("Cooked found no recipe on that page")
            case made:
                recipe_id = f"r-{next(self.ids)}"
                self.recipes.add(recipe_id)
                if made == "lost":
                    raise AnswerLost(
                        "Cooked broke off the connection", summary="Cooked broke off the connection"
                    )
                return ToolResult(f"saved {recipe_id}", Out(recipe_id=recipe_id))


@dataclass
class Model:
    """What the agent has been told, for the invariant: the import that Cooked received last."""

    running: bool = False
    ending: Ending | None = None
    recipe_id: str | None = None
    ended_at: float = 0.0
    told_unknown: int | None = None
    looked: int = 0
    events: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def may_import_again(self, now: float) -> bool:
        if self.running:
            return False
        expired = now - self.ended_at > writes.KEEP_SECONDS
        if self.ending == "saved":
            return expired or self.recipe_id is None
        if self.ending == "lost":
            return expired or (self.told_unknown is not None and self.looked > self.told_unknown)
        return True


@dataclass
class World:
    writes: writes.Writes
    cooked: Cooked
    model: Model
    clock: list[float]
    calls: list[anyio.CancelScope] = field(default_factory=list)
    #: Imports Cooked received while the model said none may be sent (the change's own task
    #: cannot fail the test: the kept outcomes would take its AssertionError for an unknown outcome).
    violations: list[str] = field(default_factory=list)


async def ready() -> None:
    """Let every task that can run, run (no timer is involved anywhere)."""
    for _ in range(20):
        await asyncio.sleep(0)


async def dispatched(world: World, answer_seconds: float | None, scope: anyio.CancelScope) -> None:
    """One save_recipe source=url call, as dispatch.py runs it."""
    call = ToolCall("save_recipe", report_progress=lambda *_: asyncio.sleep(0))
    write = writes.Write.of(
        call, Args(source="url", url=URL), area="recipes", look="read target=recipes", reported_again=True
    )
    model = world.model

    async def change() -> ToolResult[Out]:
        if not model.may_import_again(world.clock[0]):
            world.violations.append(f"a second import while the first's outcome is kept: {model}")
        model.running, model.ending, model.recipe_id = True, None, None
        try:
            result = await world.cooked.import_url()
        except AnswerLost:
            model.ending = "lost"
            raise
        except ToolError:
            model.ending = "refused"
            raise
        finally:
            model.running, model.ended_at = False, world.clock[0]
        model.ending, model.recipe_id = "saved", result.output.recipe_id
        return result

    def still_running(age: float | None) -> ToolResult[Out]:
        return ToolResult("still running", Out(import_running=True))

    with scope:
        unknown = False
        try:
            await world.writes.run(
                write, call, change, answer_seconds=answer_seconds, still_running=still_running
            )
        except ToolError as error:
            unknown = "after that read" in str(error)
        await anyio.lowlevel.checkpoint_if_cancelled()
        call.answered()
        if unknown:
            model.told_unknown = next(model.events)


async def delete(world: World) -> None:
    """delete_recipe of the recipe the import made, when there is one (Cooked deletes it)."""
    model, recipe_id = world.model, world.model.recipe_id
    if recipe_id is None or recipe_id not in world.cooked.recipes:
        return
    call = ToolCall("delete_recipe", report_progress=lambda *_: asyncio.sleep(0))

    class Deleted(BaseModel):
        recipe_id: str

    async def change() -> ToolResult[Deleted]:
        world.cooked.recipes.discard(recipe_id)
        model.recipe_id = None
        return ToolResult("deleted", Deleted(recipe_id=recipe_id))

    write = writes.Write.of(
        call, Deleted(recipe_id=recipe_id), area="recipes", look="", recipe_ids=frozenset({recipe_id})
    )
    await world.writes.run(replace(write, deletes=recipe_id), call, change)
    call.answered()


async def play(world: World, group: anyio.abc.TaskGroup, step: Step) -> None:
    action, ending = step
    model = world.model
    match action:
        case "call" | "call-waiting":
            scope = anyio.CancelScope()
            world.calls.append(scope)
            group.start_soon(dispatched, world, 0.0 if action == "call" else None, scope)
        case "cancel" if world.calls:
            world.calls.pop(0).cancel()
        case "end" if world.cooked.waiting:
            assert ending is not None
            world.cooked.waiting.pop(0).set_result(ending)
        case "delete":
            await delete(world)
        case "read":
            model.looked = next(model.events)
            world.writes.looked("recipes")
        case "later":
            world.clock[0] += writes.KEEP_SECONDS + 1
    await ready()


steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(["call", "call-waiting", "cancel", "delete", "read", "later"]), st.none()),
        st.tuples(st.just("end"), st.sampled_from(["saved", "refused", "lost"])),
    ),
    max_size=30,
)


@pytest.mark.req("recipes.SAVE.3")
@settings(max_examples=300, deadline=None)
@given(script=steps)
async def test_no_second_import_while_the_first_is_unknown_or_successful_and_kept(script: list[Step]) -> None:
    clock = [1000.0]
    world = World(writes.Writes(clock=lambda: clock[0]), Cooked(), Model(), clock)
    async with anyio.create_task_group() as group:
        for step in script:
            await play(world, group, step)
        for waiting in world.cooked.waiting:  # end what still runs, so the group can close
            waiting.set_result("saved")
        for scope in world.calls:
            scope.cancel()
    assert world.violations == []
    assert world.cooked.received >= (1 if any(action.startswith("call") for action, _ in script) else 0)


UNRESERVED = "abcXYZ019-._~"
segments = st.lists(st.text(UNRESERVED + "%!$&'()*+,;=:@", max_size=6), min_size=1, max_size=4)


def mixed_case(text: str, upper: list[bool]) -> str:
    return "".join(c.upper() if up else c for c, up in zip(text, upper + [False] * len(text), strict=False))


def escaped(text: str, which: list[bool], lower_hex: bool) -> str:
    """Some unreserved characters of ``text`` percent-escaped (in either hex case); the two hex
    digits of an escape already there are not characters of their own (escaping one would make
    its ``%`` a literal one, another page)."""
    inside = {i + k for i in range(len(text)) if re.match(r"%[0-9A-Fa-f]{2}", text[i:]) for k in (1, 2)}
    out = []
    for i, (char, escape) in enumerate(zip(text, which + [False] * len(text), strict=False)):
        code = f"%{ord(char):02X}"
        escapable = escape and char in UNRESERVED and i not in inside
        out.append((code.lower() if lower_hex else code) if escapable else char)
    return "".join(out)


@pytest.mark.req("recipes.SAVE.3")
@settings(max_examples=100, deadline=None)
@given(
    scheme=st.sampled_from(["http", "https"]),
    host=st.from_regex(r"[a-z][a-z0-9-]{0,8}\.(com|org)", fullmatch=True),
    path=segments.map("/".join),
    query=st.sampled_from(["", "page=2", "a=b&c=%2F"]),
    upper=st.lists(st.booleans(), max_size=40),
    which=st.lists(st.booleans(), max_size=40),
    lower_hex=st.booleans(),
    port=st.booleans(),
    fragment=st.sampled_from(["", "#", "#top"]),
)
def test_every_spelling_of_a_page_has_its_key_and_another_path_another(
    scheme: str,
    host: str,
    path: str,
    query: str,
    upper: list[bool],
    which: list[bool],
    lower_hex: bool,
    port: bool,
    fragment: str,
) -> None:
    """Case of scheme and host, the default port, a fragment, escaped unreserved characters and an
    empty query change nothing; the key is its own key; a different path is a different key."""
    page = f"{scheme}://{host}/{path}" + (f"?{query}" if query else "")
    default = {"http": ":80", "https": ":443"}[scheme] if port else ""
    spelt = (
        f"{mixed_case(scheme, upper)}://{mixed_case(host, upper[::-1])}{default}/{escaped(path, which, lower_hex)}"
        + f"?{query}"
        + fragment
    )
    key = same_page(page)
    assert same_page(spelt) == key == same_page(key)
    assert same_page(f"{scheme}://{host}/{path}x") != key


@pytest.mark.req("recipes.SAVE.3")
def test_a_bare_percent_is_a_literal_one_and_never_makes_an_escape_with_what_follows() -> None:
    """Decoding ``%41`` after a bare ``%`` made ``%AB``, the key of another page: a literal
    ``%`` is what httpx sends as ``%25``, so ``/%%41B`` is ``/%25AB``, and its key is its own key."""
    key = same_page("http://a.com/%%41B")
    assert key == "http://a.com/%25AB" == same_page(key) == same_page("http://a.com/%25%41B")
    assert key != same_page("http://a.com/%AB")
    assert same_page("http://a.com/%0a") == same_page("http://a.com/%0A") == "http://a.com/%0A"
