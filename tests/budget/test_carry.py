"""The carry's arithmetic (pure, no store): a year's effect ``(L, K)`` carries a balance exactly as
stepping through the year's months does, and effects chained year by year (with the carry
clamped between years) give what carrying month by month through every year gives."""

from __future__ import annotations

from hypothesis import given, strategies as st

from countersign.toolsets.budget.carry import advance, carry, empty_start, through, year_effect

CATS = ["cat_a", "cat_b", "cat_c"]
nets = st.dictionaries(st.sampled_from([f"{m:02d}" for m in range(1, 13)]),
                       st.integers(-50_000, 50_000).filter(bool), max_size=6)
years = st.fixed_dictionaries({}, optional={
    "d": st.dictionaries(st.sampled_from(CATS), nets.filter(bool), min_size=1),
    "f": st.dictionaries(st.sampled_from([f"{m:02d}" for m in range(1, 13)]),
                         st.integers(-90_000, 90_000).filter(bool), min_size=1)})
carries = st.fixed_dictionaries({"available": st.dictionaries(st.sampled_from(CATS), st.integers(1, 80_000)),
                                 "flow": st.integers(-100_000, 100_000)})


def clamped(end: dict) -> dict:
    return {"available": {c: a for c, a in end["available"].items() if a > 0}, "flow": end["flow"]}


@given(carries, years)
def test_a_years_effect_carries_a_balance_as_its_months_do(start, year):
    assert advance(start, year_effect(year)) == clamped(carry(start, year))


@given(st.lists(years, max_size=6))
def test_effects_chained_through_a_block_give_the_month_by_month_carry(history):
    block = {"start": empty_start(), "y": {str(2020 + i): year_effect(y) for i, y in enumerate(history)}}
    end = empty_start()
    for i, year in enumerate(history):
        assert through(block, before=str(2020 + i)) == clamped(end)
        end = carry(end, year)
    assert through(block) == clamped(end)


def test_a_year_effect_leaves_out_what_only_takes_an_overspent_balance():
    """+5 then −5 leaves a carry as ``max(c, 0)``: no entry; a year with no net and no flow: nothing."""
    assert year_effect({"d": {"cat_a": {"01": 5_000, "02": -5_000}}}) == {}
    assert year_effect({}) == {}
    assert year_effect({"d": {"cat_a": {"03": -30_000, "06": 5_000}}, "f": {"03": -30_000}}) == {
        "e": {"cat_a": [5_000, -25_000]}, "f": -30_000}
