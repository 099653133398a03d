"""A leaderboard that runs in public: what a submitter controls (the result file, its model spec)
cannot make the maintainer's machine read and publish its files, contact an address, or list a
twin of a verified model; the identity on the board is the one re-scoring proved; an unverified
file never blocks a verified one.  Each test names the guarantee of the threat model in docs/leaderboard.md."""
from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from contstim_bench.driver import evaluate
from contstim_bench.leaderboard.add import add_result
from contstim_bench.leaderboard.identity import identity
from contstim_bench.leaderboard.policy import load_entries
from contstim_bench.leaderboard.site import build_site
from contstim_bench.leaderboard.spec_policy import admit
from contstim_bench.leaderboard.verification import validate_and_rescore
from leaderboard_helpers import one_png, with_scores  # tests/leaderboard/leaderboard_helpers.py

SHIPPED = Path(__file__).resolve().parents[2] / "leaderboard" / "results"
SECRET = "hf_SECRET_TOKEN_0123456789"


@pytest.fixture(scope="module")
def datasets(rescoring_datasets_with_smollm2):
    """A score cache of this module's own, starting with SmolLM2's scores of the shipped sentences
    (tests/leaderboard/conftest.py): nothing here counts what re-scoring sends to the model."""
    return rescoring_datasets_with_smollm2


def shipped(name: str) -> dict:
    return json.loads((SHIPPED / f"{name}.json").read_text(encoding="utf-8"))


def rescored_copy(result: dict, datasets, **model) -> dict:
    """``result`` with ``model`` fields replaced and every score recomputed (a consistent file)."""
    out = copy.deepcopy(result)
    out["model"] = {**out["model"], **model}
    return with_scores(out, datasets)


def dump(folder: Path, name: str, result: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(result), encoding="utf-8")
    return folder / name


def published_text(site: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in site.rglob("*")
                     if p.is_file() and p.suffix in (".html", ".js", ".json", ".csv"))


def test_a_submission_cannot_read_or_publish_the_maintainers_files(tmp_path, datasets):
    """Guarantee: a spec from a submission never loads a path it names, and no published reason
    quotes a file's content or a local path (kenlm:<file>, /proc/self/environ, a non-model file
    of the models folder)."""
    secret = tmp_path / "maintainer" / "token.txt"
    secret.parent.mkdir()
    secret.write_text(f"\n{SECRET}\n", encoding="utf-8")
    models = tmp_path / "maintainer" / "models"
    models.mkdir()
    (models / "notes.arpa").write_text(f"{SECRET}\n", encoding="utf-8")  # not a model: loading it fails
    roberta = shipped("roberta")
    specs = {"file": f"kenlm:{secret}", "environ": "kenlm:/proc/self/environ", "named": "kenlm:notes.arpa",
             "folder": f"hf-causal:{secret.parent}"}
    folder = tmp_path / "results"
    for key, spec in specs.items():
        dump(folder, f"{key}.json", rescored_copy(roberta, datasets, spec=spec, name=f"sneaky-{key}",
                                                  fingerprint=f"f-{key}"))
    log: list[str] = []
    checked = {Path(c.source).stem: c for c in
               validate_and_rescore(sorted(folder.glob("*.json")), datasets_dir=datasets, models_folder=models,
                                    log=log.append)}
    assert all(c.ok and not c.verified for c in checked.values())
    assert "'token.txt' is not in the maintainer's models folder" in checked["file"].verification
    assert "could not be loaded or run here" in checked["named"].verification  # it was loaded: by its name
    assert any(SECRET in line for line in log)  # the maintainer's own console says what failed
    for c in checked.values():
        assert SECRET not in c.verification and str(tmp_path) not in c.verification.replace(specs["file"], "")
    site = build_site(folder, tmp_path / "site", datasets_dir=datasets, models_folder=models, log=lambda m: None,
                      plot=one_png)
    text = published_text(site)
    assert SECRET not in text and str(models) not in text and "USER=" not in text and "PATH=" not in text
    pytest.importorskip("gradio")
    from contstim_bench.leaderboard.app import evaluate_spec, submit_file

    answer = submit_file(folder / "named.json", SHIPPED, datasets, rescore=True)
    assert "**Unverified**" in answer and SECRET not in answer
    assert SECRET not in evaluate_spec(f"kenlm:{secret}", datasets)


def test_served_models_and_moving_revisions_are_never_loaded(tmp_path, datasets):
    """Guarantee: an address in a submission is never contacted; only a full commit pins a Hub
    model (``revision=main`` is a branch)."""
    roberta = shipped("roberta")
    cases = {
        "served": ("hf-causal:http://127.0.0.1:9/v1", "names a served model"),
        "branch": ("hf-causal:openai-community/gpt2?revision=main", "is not a full 40-character commit hash"),
        "pool": ("precomputed:x.npy?sentences=/etc/hostname", "names a reference model of the paper here"),
    }
    for key, (spec, reason) in cases.items():
        path = dump(tmp_path, f"{key}.json", rescored_copy(roberta, datasets, spec=spec, name=key, fingerprint=key))
        [c] = validate_and_rescore([path], datasets_dir=datasets)
        assert c.ok and not c.verified and reason in c.verification, (key, c.verification)
    assert admit("hf-causal:gpt2?revision=" + "0" * 40).admitted


def test_identity_on_the_board_is_the_one_rescoring_proved(tmp_path, datasets):
    """Guarantee: a claimed fingerprint or revision that the re-scored model does not have is
    refused (a renamed copy of a genuine result is no second verified entry)."""
    bert = shipped("bert")
    copied = rescored_copy(bert, datasets, name="my-new-model", fingerprint="0" * 64)
    [c] = validate_and_rescore([dump(tmp_path, "copy.json", copied)], datasets_dir=datasets)
    assert not c.ok and not c.verified
    assert any(p.startswith("model.fingerprint is '" + "0" * 64) for p in c.problems), c.problems
    honest_copy = rescored_copy(bert, datasets, name="my-new-model")
    [c] = validate_and_rescore([dump(tmp_path, "copy2.json", honest_copy)], results_dir=SHIPPED,
                               datasets_dir=datasets)
    assert any(p.startswith("duplicate: model 'my-new-model'") for p in c.problems), c.problems


@pytest.mark.parametrize("name, twin_spec", [
    ("smollm2-135m", "smollm2-135m?start=<|endoftext|>"),
    ("smollm2-135m", "hf-causal:smollm2-135m?device_map=auto"),
])
def test_redundant_default_options_make_no_twin(name, twin_spec):
    """Guarantee: specs are compared in canonical form with default options removed."""
    result = shipped(name)
    twin = copy.deepcopy(result)
    twin["model"]["spec"] = twin_spec
    assert identity(twin) == identity(result)
    other = copy.deepcopy(result)
    other["model"]["fingerprint"] = "another model"
    assert identity(other) != identity(result)


def test_kenlm_boundary_defaults_make_no_twin(tmp_path, datasets, kn_trigram):
    """The same n-gram file with ``?bos=1&eos=true`` (the defaults) is the same verified model;
    a local model is verified only from the maintainer's models folder, by name."""
    pytest.importorskip("kenlm")
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(kn_trigram, models / kn_trigram.name)
    folder = tmp_path / "results"
    for key, spec in (("plain", f"kenlm:{kn_trigram}"), ("twin", f"kenlm:{kn_trigram}?bos=1&eos=true")):
        evaluate(spec, ["contstim.pll"], datasets_dir=datasets, name=f"trigram-{key}", log=lambda m: None,
                 output=folder / f"{key}.json")
    plain, twin = validate_and_rescore([folder / "plain.json", folder / "twin.json"], datasets_dir=datasets,
                                       models_folder=models)
    assert plain.ok and plain.verified, plain.verification
    assert twin.problems and twin.problems[0].startswith("duplicate: model 'trigram-twin'"), twin.problems
    [alone] = validate_and_rescore([folder / "plain.json"], datasets_dir=datasets)  # no models folder
    assert alone.ok and not alone.verified and "no models folder configured" in alone.verification


def test_an_unverified_forgery_never_blocks_the_genuine_model(tmp_path, datasets):
    """Guarantee: an unverifiable file that claims a genuine model's identity is listed among the
    unverified files; the genuine model is then added and listed as verified."""
    bert = shipped("bert")
    forgery = rescored_copy(bert, datasets, spec="precomputed:gpt5", name="forged")  # unloadable; bert's identity
    folder = tmp_path / "results"
    assert identity(forgery) == identity(bert)
    dump(folder, "aaa-forgery.json", forgery)
    added = add_result(SHIPPED / "bert.json", folder, datasets_dir=datasets)
    assert added.verification.startswith("verified") and added.replaced is None
    entries = {Path(c.source).name: c for c in load_entries(folder, datasets_dir=datasets)}
    assert entries["bert.json"].verified and not entries["aaa-forgery.json"].verified
    with pytest.raises(ValueError, match="already has this model"):  # a verified file still blocks its twin
        add_result(dump(tmp_path, "again.json", bert), folder, datasets_dir=datasets)


def test_twins_with_the_same_numbers_are_one_model(tmp_path, datasets):
    """Guarantee: a verified result with a verified entry's log-probabilities is that model,
    whatever its spec says (here the reference under an explicit ``?split=``, whose fingerprint
    differs); masked-LM options written another way are one identity."""
    from contstim_bench.driver import RunOptions, load_model
    from contstim_bench.leaderboard.identity import identity_options

    spec = "precomputed:roberta?split=pll"
    proved = load_model(spec, RunOptions(progress=False), datasets_dir=datasets).fingerprint()
    twin = rescored_copy(shipped("roberta"), datasets, spec=spec, fingerprint=proved)
    [c] = validate_and_rescore([dump(tmp_path, "twin.json", twin)], results_dir=SHIPPED, datasets_dir=datasets)
    assert c.verified and c.problems == [
        "duplicate: model 'roberta' has the log-probabilities of roberta.json (every shared sentence within 0.001 "
        "nats): the same model"]
    assert identity_options("hf-masked", {"normalize": "yes", "orders": "0100", "method": "pll"}) == \
        identity_options("hf-masked", {"normalize": "true", "method": "pll"}) == {"method": "pll", "normalize": "true"}


def test_every_identity_field_is_proved_and_a_dtype_override_is_no_verdict(tmp_path, datasets):
    """Guarantee: the method, start token and dtype a file claims are the re-scored model's (a
    twin cannot hide behind ``dtype: "fp32"``); a maintainer's ``--dtype`` other than the
    result's leaves it unverified, never verified without the fingerprint compared."""
    from contstim_bench.driver import RunOptions

    result = shipped("smollm2-135m")
    spelled = copy.deepcopy(result)
    spelled["model"]["dtype"] = "fp32"
    [c] = validate_and_rescore([dump(tmp_path, "fp32.json", spelled)], datasets_dir=datasets)
    assert not c.ok and any(p.startswith("model.dtype is 'fp32', but the model re-scored here") for p in c.problems)
    [c] = validate_and_rescore([SHIPPED / "smollm2-135m.json"], datasets_dir=datasets,
                               options=RunOptions(dtype="bfloat16"))
    assert c.ok and not c.verified and c.verification.startswith("unverified: re-scored in bfloat16 (the maintainer's choice)")


@pytest.mark.parametrize("name", ["ＲｏＢＥＲＴａ", "r\u043eberta", "RoBERTa", "rob\u0435rta", "r\u043eb\u0435rta"])
def test_a_name_that_looks_like_a_reference_is_refused(tmp_path, datasets, name):
    """Guarantee: a reserved name cannot be worn with fullwidth letters, another case, a Cyrillic
    о or е, or inner whitespace (the TR39 confusable skeleton: contstim_bench.names.name_key)."""
    from contstim_bench.leaderboard.validate import validate_files

    lookalike = rescored_copy(shipped("smollm2-135m"), datasets, name=name)
    [c] = validate_files([dump(tmp_path, "look.json", lookalike)], datasets_dir=datasets)
    assert c.problems == [f"model.name {name!r} looks like the reserved name of the paper's reference model "
                          "'roberta' (the same after Unicode normalisation, case folding, whitespace and the TR39 "
                          "confusable skeleton: contstim_bench.names.name_key); submit under another name"]


@pytest.mark.parametrize("name", ["roberta ", " roberta"])
def test_a_reserved_name_with_surrounding_whitespace_is_refused(tmp_path, datasets, name):
    """A name with whitespace around it (once listed as `roberta`, taking its page) is refused."""
    from contstim_bench.leaderboard.validate import validate_files

    lookalike = rescored_copy(shipped("smollm2-135m"), datasets, name=name)
    [c] = validate_files([dump(tmp_path, "look.json", lookalike)], datasets_dir=datasets)
    assert c.problems == [f"result.model.name: {name!r} starts or ends with whitespace"]


def test_another_file_of_the_same_name_leaves_the_entry_unverified(tmp_path, datasets, kn_trigram):
    """Two submitters may name different n-gram files alike: when the maintainer's file of that
    name is another model, the entry is unverified (not refused, which would stop the board)."""
    pytest.importorskip("kenlm")
    models = tmp_path / "models"
    models.mkdir()
    lines = kn_trigram.read_text(encoding="utf-8").splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("-") and "\tA\t" in line)
    lines[first] = "-1.5" + lines[first][lines[first].index("\t"):]  # another probability for 'A'
    (models / kn_trigram.name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "mine.json"
    evaluate(f"kenlm:{kn_trigram}", ["contstim.pll"], datasets_dir=datasets, log=lambda m: None, output=out)
    [c] = validate_and_rescore([out], datasets_dir=datasets, models_folder=models)
    assert c.ok and not c.verified
    assert c.verification.startswith("unverified: the maintainer's model of that name is not the model that produced")
