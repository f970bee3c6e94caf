"""The audit chain: what an intact chain is, and that every edit, removal or reordering is
found at the entry where it was made (seed 003 §5: audit is append-only and hash-chained)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lineup.core.audit import (
    EMPTY,
    GENESIS,
    AuditEntry,
    ChainWalk,
    Head,
    Problem,
    entry_hash,
    next_entry,
    verify,
)
from lineup.core.canonical import canonical

T0 = 1_785_000_000_000

KINDS = ("approval.decided", "execution.finished", "policy.rule_set", "permission.revoked")

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53) + 1, 2**53 - 1)
    | st.floats(-1e15, 1e15, allow_nan=False).filter(lambda f: f != int(f))
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=8,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)


@st.composite
def chains(draw: st.DrawFn, min_size: int = 1, max_size: int = 10) -> list[AuditEntry]:
    head = EMPTY
    chain: list[AuditEntry] = []
    for i in range(draw(st.integers(min_size, max_size))):
        entry = next_entry(
            head,
            at_ms=T0 + i * draw(st.integers(0, 5_000)),
            kind=draw(st.sampled_from(KINDS)),
            workspace_id=draw(st.none() | st.sampled_from(["ws_a", "ws_b"])),
            actor=draw(st.sampled_from(["user:u1", "agent:ag1", "hub"])),
            subject=draw(st.sampled_from(["approval:apr_1", "execution:exe_1", "policy:p"])),
            data=draw(json_objects),
        )
        chain.append(entry)
        head = entry.head
    return chain


def _chain(n: int) -> list[AuditEntry]:
    head = EMPTY
    chain = []
    for i in range(n):
        entry = next_entry(
            head,
            at_ms=T0 + i,
            kind="approval.decided",
            workspace_id="ws_a",
            actor="user:u1",
            subject=f"approval:apr_{i}",
            data={"decision": "approve", "i": i},
        )
        chain.append(entry)
        head = entry.head
    return chain


def _other(value: Any) -> Any:
    """A value of the same field that differs from ``value``."""
    if isinstance(value, bool) or value is None:
        return "ws_other"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, dict):
        return {**value, "tampered": True}
    raise AssertionError(value)


FIELDS = ("seq", "at_ms", "kind", "workspace_id", "actor", "subject", "data", "prev_hash", "hash")


def test_an_untouched_chain_verifies_against_its_head() -> None:
    chain = _chain(5)
    result = verify(chain, chain[-1].head)
    assert result.ok and result.problem is None and result.first_bad_seq is None
    assert result.checked == 5
    assert result.head == chain[-1].head
    assert result.message == f"audit chain intact: 5 entries, head {chain[-1].hash}"


def test_an_empty_chain_verifies_against_the_genesis_head() -> None:
    result = verify([], Head(0, GENESIS))
    assert result.ok and result.checked == 0 and result.head == EMPTY


def test_the_first_entry_follows_the_genesis_hash_and_each_entry_the_one_before() -> None:
    chain = _chain(3)
    assert [e.seq for e in chain] == [1, 2, 3]
    assert chain[0].prev_hash == GENESIS == "sha256:" + "0" * 64
    assert chain[1].prev_hash == chain[0].hash and chain[2].prev_hash == chain[1].hash


def test_the_hash_is_sha256_of_the_rfc8785_form_of_every_other_field() -> None:
    """Pinned bytes, so a verifier written in another language can check its own."""
    entry = next_entry(
        EMPTY,
        at_ms=1,
        kind="token.revoked",
        workspace_id=None,
        actor="hub",
        subject="token:tok_1",
        data={"z": 1, "a": "é"},
    )
    text = (
        '{"actor":"hub","at_ms":1,"data":{"a":"é","z":1},"kind":"token.revoked",'
        f'"prev_hash":"{GENESIS}","seq":1,"subject":"token:tok_1","workspace_id":null}}'
    )
    assert entry.hash == "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    assert entry.hash == entry_hash(**entry.content())


@given(chain=chains())
def test_a_random_untouched_chain_verifies(chain: list[AuditEntry]) -> None:
    result = verify(chain, chain[-1].head)
    assert result.ok and result.checked == len(chain)


@given(chain=chains(), data=st.data())
def test_changing_any_field_of_any_entry_is_found_at_that_entry(
    chain: list[AuditEntry], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(chain) - 1))
    name = data.draw(st.sampled_from(FIELDS))
    victim = chain[index]
    tampered = replace(victim, **{name: _other(getattr(victim, name))})
    result = verify([*chain[:index], tampered, *chain[index + 1 :]], chain[-1].head)
    assert not result.ok
    assert result.first_bad_seq == victim.seq
    assert result.problem is Problem.CHANGED
    assert result.checked == index
    assert result.found == tampered


@given(chain=chains(min_size=2), data=st.data())
def test_removing_any_entry_is_found_where_it_was(
    chain: list[AuditEntry], data: st.DataObject
) -> None:
    index = data.draw(st.integers(0, len(chain) - 1))
    result = verify([*chain[:index], *chain[index + 1 :]], chain[-1].head)
    assert not result.ok
    assert result.first_bad_seq == chain[index].seq
    last = index == len(chain) - 1
    assert result.problem is (Problem.HEAD_MISMATCH if last else Problem.REMOVED)


@given(chain=chains(min_size=2), data=st.data())
def test_swapping_any_two_entries_is_found_at_the_first_of_them(
    chain: list[AuditEntry], data: st.DataObject
) -> None:
    i = data.draw(st.integers(0, len(chain) - 2))
    j = data.draw(st.integers(i + 1, len(chain) - 1))
    swapped = list(chain)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    result = verify(swapped, chain[-1].head)
    assert not result.ok
    assert result.first_bad_seq == chain[i].seq
    assert result.problem is Problem.REORDERED


@given(chain=chains(min_size=2), data=st.data())
def test_swapping_two_entries_contents_under_their_seqs_is_a_change(
    chain: list[AuditEntry], data: st.DataObject
) -> None:
    """What an SQL swap of two rows looks like: each seq keeps its place, the rest moves."""
    i = data.draw(st.integers(0, len(chain) - 2))
    j = data.draw(st.integers(i + 1, len(chain) - 1))
    swapped = list(chain)
    swapped[i] = replace(chain[j], seq=chain[i].seq)
    swapped[j] = replace(chain[i], seq=chain[j].seq)
    result = verify(swapped, chain[-1].head)
    assert not result.ok and result.first_bad_seq == chain[i].seq


@given(chain=chains(), pages=st.lists(st.integers(1, 4), min_size=1, max_size=10))
def test_a_chain_walked_in_pages_verifies_as_in_one_go(
    chain: list[AuditEntry], pages: list[int]
) -> None:
    walk = ChainWalk()
    at = 0
    for size in pages * len(chain):
        assert walk.feed(chain[at : at + size]) is None
        at += size
    assert walk.finish(chain[-1].head) == verify(chain, chain[-1].head)


def test_a_walk_stops_at_the_first_problem_whatever_comes_after() -> None:
    chain = _chain(6)
    walk = ChainWalk()
    tampered = replace(chain[3], data={"decision": "deny"})
    first = walk.feed([*chain[:3], tampered])
    assert first is not None and first.first_bad_seq == 4
    assert walk.feed(chain[4:]) == first
    assert walk.finish(chain[-1].head) == first


def test_a_removed_tail_is_found_by_the_head() -> None:
    chain = _chain(5)
    result = verify(chain[:3], chain[-1].head)
    assert not result.ok
    assert (result.problem, result.first_bad_seq, result.checked) == (Problem.HEAD_MISMATCH, 4, 3)
    assert "the last 2 entries were removed" in result.message


def test_entries_past_the_head_are_a_head_mismatch() -> None:
    chain = _chain(5)
    result = verify(chain, chain[2].head)
    assert (result.ok, result.problem, result.first_bad_seq) == (False, Problem.HEAD_MISMATCH, 4)


def test_a_head_whose_hash_names_another_entry_is_a_head_mismatch() -> None:
    chain = _chain(3)
    result = verify(chain, Head(3, chain[1].hash))
    assert (result.ok, result.problem, result.first_bad_seq) == (False, Problem.HEAD_MISMATCH, 3)


def test_without_a_head_a_removed_tail_goes_unseen() -> None:
    """Why the head is stored: the entries alone cannot tell a short chain from a cut one."""
    assert verify(_chain(5)[:3]).ok


def test_an_entry_rewritten_with_its_hash_recomputed_breaks_the_link_after_it() -> None:
    chain = _chain(4)
    forged = replace(chain[1], data={"decision": "deny"})
    forged = replace(forged, hash=entry_hash(**forged.content()))
    result = verify([chain[0], forged, *chain[2:]], chain[-1].head)
    assert (result.ok, result.problem, result.first_bad_seq) == (False, Problem.REMOVED, 3)


def test_rewriting_the_whole_tail_and_the_head_goes_unseen() -> None:
    """The limit of a chain kept beside its head: only a head hash kept elsewhere (exported,
    published) tells this rewrite from the truth."""
    chain = _chain(3)
    rewritten = chain[:1]
    for original in chain[1:]:
        entry = next_entry(
            rewritten[-1].head,
            at_ms=original.at_ms,
            kind=original.kind,
            workspace_id=original.workspace_id,
            actor=original.actor,
            subject=original.subject,
            data={"decision": "deny"},
        )
        rewritten.append(entry)
    assert verify(rewritten, rewritten[-1].head).ok
    assert rewritten[-1].hash != chain[-1].hash


def test_a_chain_that_starts_past_seq_one_is_missing_its_start() -> None:
    result = verify(_chain(3)[1:])
    assert (result.problem, result.first_bad_seq) == (Problem.REMOVED, 1)
    assert "seq 1 is missing" in result.message


def test_an_entry_repeated_is_out_of_order() -> None:
    chain = _chain(3)
    result = verify([chain[0], chain[1], chain[1], chain[2]])
    assert (result.problem, result.first_bad_seq) == (Problem.REORDERED, 3)


def test_data_is_kept_in_the_form_it_reads_back_in() -> None:
    entry = next_entry(
        EMPTY, at_ms=1, kind="k", workspace_id=None, actor="hub", subject="s", data={"n": 3.0}
    )
    assert entry.data == {"n": 3} and type(entry.data["n"]) is int


@pytest.mark.parametrize(
    "data", [{"n": 2**53}, {"n": -(2**60)}, {"n": 1e21}, {"deep": [{"n": 2.0**60}]}, {"f": {1, 2}}]
)
def test_numbers_a_json_double_cannot_hold_exactly_are_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        next_entry(EMPTY, at_ms=1, kind="k", workspace_id=None, actor="hub", subject="s", data=data)


@pytest.mark.parametrize("missing", ["kind", "actor", "subject"])
def test_an_entry_needs_a_kind_an_actor_and_a_subject(missing: str) -> None:
    fields: dict[str, Any] = {"kind": "k", "actor": "hub", "subject": "s", missing: ""}
    with pytest.raises(ValueError, match=missing):
        next_entry(EMPTY, at_ms=1, workspace_id=None, data={}, **fields)


@given(chain=chains())
def test_an_exported_record_reads_back_as_the_same_entry(chain: list[AuditEntry]) -> None:
    import json

    for entry in chain:
        line = canonical(entry.record())
        assert AuditEntry.from_record(json.loads(line)) == entry


@pytest.mark.parametrize("broken", [{"seq": "1"}, {"data": []}, {"hash": None}, {"seq": True}])
def test_a_record_with_a_field_of_the_wrong_type_is_refused(broken: dict[str, Any]) -> None:
    record = {**_chain(1)[0].record(), **broken}
    with pytest.raises(ValueError, match="wrong type"):
        AuditEntry.from_record(record)


def test_a_record_missing_a_field_is_refused() -> None:
    record = _chain(1)[0].record()
    del record["prev_hash"]
    with pytest.raises(ValueError, match="prev_hash"):
        AuditEntry.from_record(record)
