"""perfdb/cache/keys.py: two keys are equal exactly when their kind and parameters are."""

from __future__ import annotations

import pytest

from perfdb.cache import cache_key


def test_the_order_parameters_are_given_in_does_not_matter():
    assert cache_key("chart", scope="1-2-SMP", metric=5) == cache_key(
        "chart", metric=5, scope="1-2-SMP"
    )


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (cache_key("chart", metric=5), cache_key("chart", metric=6)),
        (cache_key("chart", metric=5), cache_key("view", metric=5)),
        (cache_key("chart", metric=5), cache_key("chart", setup=5)),
        (cache_key("chart", metric=5), cache_key("chart", metric=5, top=10)),
        (cache_key("chart", setups=("1", "2")), cache_key("chart", setups=("12",))),
    ],
)
def test_different_parameters_make_different_keys(one, other):
    assert one != other


def test_none_is_not_the_empty_text_nor_the_text_none():
    keys = {
        cache_key("kernel-time", param=None),
        cache_key("kernel-time", param=""),
        cache_key("kernel-time", param="None"),
        cache_key("kernel-time", param="~"),
    }
    assert len(keys) == 4


def test_an_int_is_its_decimal_text():
    """A setup's id and the URL's text of it name the same value."""
    assert cache_key("series", metric=3) == cache_key("series", metric="3")


@pytest.mark.parametrize(
    ("one", "other"),
    [
        # a value carrying the separator and another parameter
        (cache_key("scaling", param="a:rest=b"), cache_key("scaling", param="a", rest="b")),
        (cache_key("view", build="x:value=y"), cache_key("view", build="x", value="y")),
        # a kind carrying a parameter
        (cache_key("a:b=c"), cache_key("a", b="c")),
        # text that reads as a list, or a list item carrying the item separator
        (cache_key("c", setups="[1,2,]"), cache_key("c", setups=["1", "2"])),
        (cache_key("c", setups=["1,2"]), cache_key("c", setups=["1", "2"])),
        (cache_key("c", setups="{1,}"), cache_key("c", setups={"1"})),
        # the escape itself
        (cache_key("c", build="%3A"), cache_key("c", build=":")),
    ],
)
def test_text_cannot_pass_for_another_key(one, other):
    assert one != other


def test_a_key_nested_in_another_is_one_escaped_parameter():
    chart = cache_key("scaling", param="threads", rest="x")
    view = cache_key("scaling-view", chart=chart, builds=frozenset({"2.6.1"}))
    assert view == "scaling-view:builds={2.6.1,}:chart=scaling%3Aparam=threads%3Arest=x"


def test_a_list_keeps_its_order_and_a_set_does_not():
    assert cache_key("c", setups=["1", "2"]) != cache_key("c", setups=["2", "1"])
    assert cache_key("c", setups=("1", "2")) == cache_key("c", setups=["1", "2"])
    assert cache_key("c", builds={"b", "a"}) == cache_key("c", builds=frozenset({"a", "b"}))


def test_no_item_is_not_one_empty_item():
    keys = {cache_key("c", setups=[]), cache_key("c", setups=[""]), cache_key("c", setups="")}
    assert len(keys) == 3


@pytest.mark.parametrize("value", [True, 1.5, [["1"]], {"a": 1}])
def test_a_value_a_key_cannot_write_unambiguously_is_refused(value):
    with pytest.raises(TypeError):
        cache_key("c", x=value)
