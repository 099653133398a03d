"""The package's one slug rule (contstim_bench.names) and its one copy of each citation
(contstim_bench.citations)."""
from __future__ import annotations

import re

import pytest

from contstim_bench import citations
from contstim_bench.names import slug


@pytest.mark.parametrize(
    "text,expected",
    [
        ("smollm2-135m", "smollm2-135m"),  # shipped result files keep their names
        ("gemma3-270m", "gemma3-270m"),
        ("hf-causal:gpt2", "hf-causal_gpt2"),
        ("hf-masked:bert-base-cased?method=pll", "hf-masked_bert-base-cased_method_pll"),
        ("kenlm:/tmp/my model.arpa", "kenlm_tmp_my_model.arpa"),
        ("..hidden_", "hidden"),
        ("", "model"),
        ("::", "model"),
    ],
)
def test_slug(text, expected):
    assert slug(text) == expected


def test_slug_max_length():
    assert slug("a" * 100, max_length=80) == "a" * 80
    assert slug("a" * 100) == "a" * 100


def test_golan_citation_is_the_contstim_cards():
    from contstim_bench.data.contstim_card import CITATION

    assert CITATION is citations.GOLAN_2023  # the dataset fingerprint covers this text


@pytest.mark.parametrize("name", ["GOLAN_2023", "KAUF_IVANOVA_2023", "KAUF_2024"])
def test_citations_are_single_bibtex_entries(name):
    text = getattr(citations, name)
    assert re.fullmatch(r"@(article|inproceedings)\{\w+,\n(  \w+ *= \{.+\},?\n)+\}", text), text
