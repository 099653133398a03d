"""A public leaderboard at its edges: names (look-alikes, whitespace, length), races (concurrent
adds, a file replaced while it is re-scored, a refused file in a batch), secrets in submitted
specs, and the smaller doors (build past a refused file, report over its own input, add of an
`evaluate --output` folder).  Each test names its guarantee of the threat model in
docs/leaderboard.md."""
from __future__ import annotations

import copy
import json
import multiprocessing
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contstim_bench.cli import main as cli_main
from contstim_bench.leaderboard.add import add_result
from contstim_bench.leaderboard.site import build_site
from contstim_bench.leaderboard.spec_policy import admit
from contstim_bench.leaderboard.verification import validate_and_rescore
from contstim_bench.names import MAX_NAME_LENGTH, check_name, name_key
from contstim_bench.results.schema import result_problems
from contstim_bench.scoring.spec import parse_spec
from leaderboard_helpers import one_png, with_scores

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
SECRET = "SeCrEtVaLuE0123456789"


@pytest.fixture(scope="module")
def datasets(rescoring_datasets):
    return rescoring_datasets


def shipped(name: str) -> dict:
    return json.loads((SHIPPED / f"{name}.json").read_text(encoding="utf-8"))


def dump(folder: Path, name: str, result: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(result), encoding="utf-8")
    return folder / name


def renamed(result: dict, datasets, **model) -> dict:
    out = copy.deepcopy(result)
    out["model"] = {**out["model"], **model}
    return with_scores(out, datasets)


# ----------------------------------------------------------------------------- names


def test_one_key_for_names_that_look_alike():
    """names.name_key: NFKC, case, whitespace and the TR39 confusable skeleton (disarm)."""
    same = ["roberta", "roberta ", " roberta", "RoBERTa", "r\u043eberta", "ＲｏＢＥＲＴａ", "ro\u200bberta"]
    assert len({name_key(n) for n in same}) == 1
    assert name_key("smollm2-135m") == name_key("smoIIm2-135m") == name_key("smollm2-l35m")
    distinct = ["bert", "roberta", "electra", "gpt2", "gpt-2", "smollm2-135m", "gemma3-270m", "trigram"]
    assert len({name_key(n) for n in distinct}) == len(distinct)


@pytest.mark.parametrize("name", ["roberta ", "r\u043eberta", "ROBERTA"])
def test_a_reserved_look_alike_never_takes_the_reference_page(tmp_path, datasets, name):
    """`roberta ` (listed as `roberta`) or `rоberta` (Cyrillic о) is refused by add and build,
    so the genuine reference keeps models/roberta.html."""
    folder = tmp_path / "results"
    dump(folder, "roberta.json", shipped("roberta"))
    fake = dump(tmp_path / "in", "fake.json", renamed(shipped("smollm2-135m"), datasets, name=name))
    with pytest.raises(ValueError):
        add_result(fake, folder, datasets_dir=datasets, rescore=False)
    assert sorted(p.name for p in folder.glob("*.json")) == ["roberta.json"]
    dump(folder, "a_fake.json", json.loads(fake.read_text()))  # dropped into the folder by hand
    logged: list[str] = []
    site = build_site(folder, tmp_path / "site", datasets_dir=datasets, rescore=False, log=logged.append, plot=one_png)
    assert any("refused a_fake.json" in m for m in logged), logged
    assert (site / "models" / "roberta.html").is_file() and not list((site / "models").glob("roberta-*.html"))


@pytest.mark.parametrize("spec", ["hf-causal:/any/roberta", "precomputed:/any/roberta.npy?sentences=/any/s.txt",
                                  "kenlm:/x/R\u043eBERTa.arpa"])
def test_a_name_shown_from_a_spec_path_never_takes_a_reserved_name(tmp_path, datasets, spec):
    """A result named by its spec is shown by the spec's last path component: `hf-causal:/any/roberta`
    would be listed as `roberta`. It is refused at validate and add whatever its source, so the
    genuine reference keeps models/roberta.html."""
    folder = tmp_path / "results"
    dump(folder, "roberta.json", shipped("roberta"))
    fake = renamed(shipped("smollm2-135m"), datasets, name=spec, spec=spec)
    path = dump(tmp_path / "in", "fake.json", fake)
    [c] = validate_and_rescore([path], folder, datasets_dir=datasets, rescore_models=False)
    assert len(c.problems) == 1 and "shown as" in c.problems[0] and "reserved" in c.problems[0], c.problems
    with pytest.raises(ValueError, match="shown as"):
        add_result(path, folder, datasets_dir=datasets, rescore=False)
    assert sorted(p.name for p in folder.glob("*.json")) == ["roberta.json"]


def test_a_name_that_looks_like_a_listed_model_is_refused(tmp_path, datasets):
    """A name with the skeleton of a listed model's name (and another identity) is refused at
    validate, add and build; the same name exactly is another model of that name (own page)."""
    folder = tmp_path / "results"
    dump(folder, "smollm2-135m.json", shipped("smollm2-135m"))
    look = renamed(shipped("gemma3-270m"), datasets, name="smoIIm2-135m")
    path = dump(tmp_path / "in", "look.json", look)
    [c] = validate_and_rescore([path], folder, datasets_dir=datasets, rescore_models=False)
    assert len(c.problems) == 1 and "looks like the name of the model listed as 'smollm2-135m'" in c.problems[0]
    with pytest.raises(ValueError, match="looks like the name of the model listed as 'smollm2-135m'"):
        add_result(path, folder, datasets_dir=datasets, rescore=False)


@pytest.mark.parametrize("length", [MAX_NAME_LENGTH + 1, 3_000, 10_000])
def test_long_names_are_refused_by_name_at_every_door(tmp_path, datasets, length):
    name = "m" * length
    with pytest.raises(ValueError, match=f"is {length:,} characters long, more than the 100 allowed"):
        check_name(name)
    result = shipped("bert") | {"model": {**shipped("bert")["model"], "name": name}}
    problems = [p for p in result_problems(result, dataset="contstim") if p.startswith("result.model.name")]
    assert problems == [f"result.model.name: {'m' * 60!r}"[:-1] + f"...' ({length:,} characters) is {length:,} "
                        "characters long, more than the 100 allowed"]
    assert all(len(p) < 400 for p in problems)  # the message does not repeat the name


def test_report_of_a_10000_character_name_is_refused_within_bounded_memory(tmp_path):
    """Before: `contstim report` of such a file used 24 GB in matplotlib's tight layout.  Now the
    file is refused on reading, in a subprocess capped at 3 GB of address space and 120 s."""
    bert = shipped("bert")
    bert["model"]["name"] = "x" * 10_000
    path = dump(tmp_path, "long.json", bert)

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30))

    done = subprocess.run([sys.executable, "-m", "contstim_bench", "report", str(path), "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert done.returncode == 1, done.stderr[-2000:]
    assert "10,000 characters long, more than the 100 allowed" in done.stderr
    assert len(done.stderr) < 2_000 and "MemoryError" not in done.stderr


NAME_PIECES = st.sampled_from(["roberta", "bert", "gpt2", " ", "  ", "\t", "\u043e", "\u0435", "\u200b", "\u202e",
                               "\u3164", "Ｒ", "I", "l", "1", "0", "O", "m", "rn", "-", "_", "x" * 60])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(NAME_PIECES, min_size=1, max_size=6))
def test_fuzz_names_at_every_door_that_shows_one(pieces):
    """A name made of whitespace, look-alike letters, bidi and zero-width characters and long runs:
    every door that takes a name (evaluate's --name and the spec parser through check_name, the
    result schema that validate, add, build, the app and report read through) either refuses it
    by name or takes it bounded, and then its key is no reference model's unless it is that name."""
    from contstim_bench.study import ALL_REFERENCE_MODELS

    name = "".join(pieces)
    result = shipped("bert") | {"model": {**shipped("bert")["model"], "name": name}}
    problems = [p for p in result_problems(result, dataset="contstim") if p.startswith("result.model.name")]
    try:
        check_name(name)
        refused = False
    except ValueError as exc:
        refused = True
        assert len(str(exc)) < 600
    assert refused == bool(problems), (name, problems)
    if not refused:
        assert len(name) <= MAX_NAME_LENGTH and name == name.strip()
        from contstim_bench.leaderboard.validate import check_reference_name  # the reserved-name check

        twins = [r for r in ALL_REFERENCE_MODELS if name_key(r) == name_key(name)]
        if twins and name not in ALL_REFERENCE_MODELS:
            assert check_reference_name(result)[0].startswith(f"model.name {name!r} looks like the reserved name")


# ----------------------------------------------------------------------------- races


_BARRIER = None
"""Set before the pool forks: both adds wait for each other inside the critical section."""


def _add_in_a_process(args) -> str:
    """One add, made to wait after its validation (3 s at most) until the other add has validated
    too: without the folder's lock both meet there, both then find no entry and both install;
    with it the second cannot start validating until the first has installed (the first waits
    out the barrier alone, the second finds the barrier broken and the entry there)."""
    import threading

    from contstim_bench.leaderboard import add as add_module

    path, folder, datasets = args
    real = add_module.validate_and_rescore

    def meeting(*a, **kw):
        checked = real(*a, **kw)
        try:
            _BARRIER.wait(timeout=3)
        except threading.BrokenBarrierError:
            pass
        return checked

    add_module.validate_and_rescore = meeting  # in this forked worker only
    try:
        added = add_result(path, folder, datasets_dir=datasets, rescore=False)
        return f"added {added.path.name}"
    except ValueError as exc:
        return f"refused: {exc}"


def test_two_adds_of_one_model_started_together_leave_one_entry(tmp_path, datasets):
    """Two adds of one model at once: one is added, the other refused naming it (the results
    folder's lock; without it both are "added" and one file silently replaces the other)."""
    global _BARRIER
    folder = tmp_path / "results"
    folder.mkdir()
    a = dump(tmp_path / "a", "mine.json", shipped("smollm2-135m"))
    b = dump(tmp_path / "b", "mine-again.json", shipped("smollm2-135m"))
    ctx = multiprocessing.get_context("fork")
    _BARRIER = ctx.Barrier(2)
    with ctx.Pool(2) as pool:
        answers = pool.map(_add_in_a_process, [(a, folder, datasets), (b, folder, datasets)], chunksize=1)
    assert sorted(x.split(":")[0].split()[0] for x in answers) == ["added", "refused"], answers
    assert any("already has this model" in x for x in answers)
    assert [p.name for p in folder.glob("*.json")] == ["smollm2-135m.json"]


def test_a_file_replaced_while_it_is_validated_is_not_installed(tmp_path, datasets, monkeypatch):
    """add validates the bytes it read once and installs those: the swap lands nowhere."""
    from contstim_bench.leaderboard import add as add_module

    folder = tmp_path / "results"
    source = dump(tmp_path / "in", "mine.json", shipped("smollm2-135m"))
    original = source.read_bytes()
    real = add_module.validate_and_rescore

    def swapping(paths, **kwargs):
        source.write_text('{"forged": true}', encoding="utf-8")  # replaced during re-scoring
        return real(paths, **kwargs)

    monkeypatch.setattr(add_module, "validate_and_rescore", swapping)
    added = add_result(source, folder, datasets_dir=datasets, rescore=False)
    assert added.path.read_bytes() == original


def test_a_refused_file_does_not_block_a_valid_one_of_its_batch(tmp_path, datasets, capsys):
    good = shipped("smollm2-135m")
    bad = copy.deepcopy(good)
    bad["experiments"]["pll"]["all"]["accuracy"] = 0.99  # refused: the score does not match
    a = dump(tmp_path, "a.json", bad)
    b = dump(tmp_path, "b.json", good)
    first, second = validate_and_rescore([a, b], datasets_dir=datasets, rescore_models=False)
    assert not first.ok and second.ok, second.problems


# ----------------------------------------------------------------------------- secrets

SECRET_SPECS = [
    # nested model arguments (lm-eval's --model_args '{"model_kwargs": {...}}'), as JSON and percent-encoded
    f'lm-eval:hf?pretrained=gpt2&model_kwargs={{"token":"{SECRET}"}}',
    f"lm-eval:hf?pretrained=gpt2&model_kwargs=%7B%22a%22%3A%5B%7B%22hf_token%22%3A%22{SECRET}%22%7D%5D%7D",
    f"lm-eval:local-completions?api_key={SECRET}",
    f"lm-eval:local-completions?base_url=http://user:{SECRET}@example.invalid/v1",
    f"lm-eval:hf?access-token={SECRET}",
    f"lm-eval:hf?apitoken={SECRET}",
    f"lm-eval:hf?bearer_token={SECRET}",
    f"lm-eval:hf?private_key={SECRET}",
    f"lm-eval:local-completions?base_url=http://h.invalid/v1%3Fcode%3D{SECRET}",
    f"lm-eval:local-completions?base_url=http://h.invalid/v1%3Fsig%3D{SECRET}",
    f"lm-eval:local-completions?base_url=http://h.invalid/v1%3FX-Amz-Signature%3D{SECRET}",
    f"lm-eval:hf?api%255Fkey={SECRET}",
    f"lm-eval:local-completions?base_url=//user:{SECRET}@h.invalid/v1",
]


@pytest.mark.parametrize("spec", SECRET_SPECS)
def test_a_spec_with_a_credential_is_refused_without_its_value(spec):
    with pytest.raises(ValueError) as err:
        parse_spec(spec)
    assert SECRET not in str(err.value) and "credential" in str(err.value)
    result = shipped("smollm2-135m") | {"model": {**shipped("smollm2-135m")["model"], "spec": spec}}
    problems = result_problems(result, dataset="contstim")
    assert problems and all(SECRET not in p for p in problems) and any("credential" in p for p in problems)


def test_a_submitted_spec_with_a_credential_is_never_published(tmp_path, datasets):
    folder = tmp_path / "results"
    dump(folder, "bert.json", shipped("bert"))
    leaky = renamed(shipped("smollm2-135m"), datasets, name="leaky", spec=SECRET_SPECS[2], spec_typed=SECRET_SPECS[2])
    dump(folder, "leaky.json", leaky)
    logged: list[str] = []
    site = build_site(folder, tmp_path / "site", datasets_dir=datasets, rescore=False, log=logged.append, plot=one_png)
    assert any("refused leaky.json" in m for m in logged)
    published = "\n".join(p.read_text(errors="replace") for p in site.rglob("*") if p.is_file())
    assert SECRET not in published and "leaky" not in (site / "index.html").read_text()


@pytest.mark.parametrize("encoded, named", [("%E2%80%AE", "U+202E RIGHT-TO-LEFT OVERRIDE"),
                                            ("%0D%0A", "U+000D (control character)")])
def test_percent_encoded_characters_are_refused_before_any_model_loads(encoded, named):
    with pytest.raises(ValueError, match=re.escape(f"holds, once percent-decoded, {named}")):
        parse_spec(f"lm-eval:hf?pretrained=model{encoded}x")


def test_a_hub_shaped_name_that_is_also_a_local_path_is_refused(tmp_path, monkeypatch):
    (tmp_path / "org" / "model").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    admitted = admit(f"hf-causal:org/model?revision={'a' * 40}", None)
    assert admitted.spec is None and "a path on this machine as well as a Hub id" in admitted.reason


# ----------------------------------------------------------------------------- smaller doors


def test_report_refuses_an_output_that_is_its_input(tmp_path):
    out = tmp_path / "D"
    out.mkdir()
    (out / "index.html").write_bytes((SHIPPED / "bert.json").read_bytes())
    before = (out / "index.html").read_bytes()
    assert cli_main(["report", str(out / "index.html"), "--out", str(out)]) == 1
    assert (out / "index.html").read_bytes() == before


def test_add_takes_the_folder_evaluate_output_writes(tmp_path, datasets, capsys):
    """`evaluate --output F` (no .json) writes F/contstim.pll.json: `add F` adds it."""
    from contstim_bench.driver import evaluate

    out = tmp_path / "F"
    evaluate("precomputed:electra", ["contstim.pll"], datasets_dir=datasets, output=out, log=lambda m: None)
    assert [p.name for p in out.iterdir()] == ["contstim.pll.json"]
    assert cli_main(["leaderboard", "add", str(out), "--results", str(tmp_path / "board"), "--no-rescore",
                     "--datasets", str(datasets)]) == 0
    assert "added 'electra'" in capsys.readouterr().out


@pytest.mark.parametrize("where", [("model", "method"), ("model", "zz_extra"), ("model", "device"),
                                   ("provenance", "git_commit")])
def test_every_other_shown_string_is_bounded(where):
    """Not only the name: any string of the model block or the provenance (what the site's model
    page shows) is at most 500 characters, refused by name with 60 of them shown."""
    section, key = where
    result = copy.deepcopy(shipped("bert"))
    result[section][key] = "y" * 5_000
    problems = [p for p in result_problems(result, dataset="contstim") if "longer than the 500" in p]
    assert problems == [f"result.{section}.{key}: {'y' * 60!r}"[:-1] + "...' (5,000 characters) is longer than the "
                        "500 characters a shown text may have"]


def test_the_app_shows_a_name_with_backticks_as_one_code_span():
    from contstim_bench.leaderboard.app import md_code

    assert md_code("gpt2") == "`gpt2`"
    assert md_code("a`**b**`c") == "`` a`**b**`c ``" and md_code("x``y") == "``` x``y ```"
