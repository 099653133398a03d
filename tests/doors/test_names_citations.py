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


@pytest.mark.parametrize("char,described", [
    ("\u202e", "U+202E RIGHT-TO-LEFT OVERRIDE"), ("\u202a", "U+202A LEFT-TO-RIGHT EMBEDDING"),
    ("\u2066", "U+2066 LEFT-TO-RIGHT ISOLATE"), ("\u2069", "U+2069 POP DIRECTIONAL ISOLATE"),
    ("\u200f", "U+200F RIGHT-TO-LEFT MARK"), ("\u061c", "U+061C ARABIC LETTER MARK"),
    ("\x00", "U+0000 (control character)"), ("\n", "U+000A (control character)"),
    ("\u200b", "U+200B ZERO WIDTH SPACE"), ("\ufeff", "U+FEFF ZERO WIDTH NO-BREAK SPACE"),
    ("\u2028", "U+2028 LINE SEPARATOR"), ("\ue000", "U+E000 (private-use character)"),
    ("\u3164", "U+3164 HANGUL FILLER"), ("\u00a0", "U+00A0 NO-BREAK SPACE"), ("\u2800", "U+2800 BRAILLE PATTERN BLANK"),
])
def test_names_with_control_or_bidi_characters_are_refused(char, described):
    from contstim_bench.names import check_name, name_problem

    assert name_problem(f"gpt{char}2") == f"contains {described}"
    with pytest.raises(ValueError) as exc:
        check_name(f"gpt{char}2", "model name (--name)")
    shown = repr(f"gpt{char}2").replace(char, f"\\u{ord(char):04x}")  # printable blanks are escaped too
    assert f"model name (--name) {shown} contains {described}" in str(exc.value)
    assert char not in str(exc.value)  # the message shows the character escaped, never acting on the text


def test_names_in_any_script_are_kept():
    from contstim_bench.names import check_name, name_problem

    for name in ("bert-base-cased", "Müller LM (v2)", "中文模型", "نموذج", "model 🚀", "org/gpt2 (method=pll)"):
        assert name_problem(name) is None and check_name(name) == name
    assert name_problem("a\u202eb\x00c\u202e") == "contains U+202E RIGHT-TO-LEFT OVERRIDE, U+0000 (control character)"


def test_model_lists_and_specs_refuse_such_names():
    from contstim_bench.generate.pairing import parse_models
    from contstim_bench.scoring.named import parse_named_specs
    from contstim_bench.scoring.spec import ModelSpec

    with pytest.raises(ValueError, match=r"model name in --models 'gpt\\u202e2' contains U\+202E"):
        parse_named_specs("gpt\u202e2=precomputed:roberta,bert=precomputed:bert")
    with pytest.raises(ValueError, match=r"model name in --candidates 'a\\x00' contains U\+0000"):
        parse_models("a\x00=kenlm:x.arpa,b=kenlm:y.arpa", minimum=1, flag="--candidates")
    with pytest.raises(ValueError, match=r"model spec 'hf-causal:gpt2\\u2066' contains U\+2066"):
        ModelSpec.parse("hf-causal:gpt2\u2066")
    assert ModelSpec.parse(" hf-causal:gpt2\n").target == "gpt2"  # surrounding whitespace is still trimmed
