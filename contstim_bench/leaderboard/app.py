"""The Gradio leaderboard app (``leaderboard/app.py`` launches it), in the layout of HF leaderboard
Spaces: a title and intro, then tabs: the ranking table, About, and Submit.

- **Leaderboard**: a panel selector (experiment / condition) and the static site's ranking tables
  of that panel (:func:`.board_html.panel_tables`: the verified models, one table per comparison
  group, each model ranked only like for like, with the reason a model is not ranked; then the
  unverified ones, :mod:`.policy`).  The same rows are served as data by the ``/table`` and
  ``/unverified_table`` API endpoints.  The results folder is validated and re-scored from the model specs at
  start (``CONTSTIM_LEADERBOARD_RESCORE=0`` skips re-scoring: every entry is then unverified).
- **About**: what is measured and how submissions are checked.
- **Submit**: upload a result JSON; it is validated by :mod:`.validate` (every score recomputed
  from its log-probabilities; duplicates checked against the shown results).  A valid file is
  copied into the queue folder when ``CONTSTIM_LEADERBOARD_QUEUE`` is set, named by the sha256 of
  its bytes (no upload replaces another; the same file twice is answered as a duplicate).  When
  the maintainer sets ``CONTSTIM_LEADERBOARD_ALLOW_EVAL=1``, the tab also evaluates a model spec
  on the server and a submission is re-scored from its spec, both under the policy of
  :mod:`.spec_policy` (local models only by name from ``CONTSTIM_LEADERBOARD_MODELS``, Hub models
  pinned to a commit, no served address contacted), so the answer says whether it is verified
  (the scorer registry never runs a model's own code); otherwise a valid submission is unverified until
  the maintainer re-scores it (``contstim leaderboard validate`` does by default).

Environment: ``CONTSTIM_LEADERBOARD_RESULTS`` (results folder), ``CONTSTIM_LEADERBOARD_QUEUE``,
``CONTSTIM_LEADERBOARD_ALLOW_EVAL``, ``CONTSTIM_LEADERBOARD_RESCORE``, ``CONTSTIM_LEADERBOARD_MODELS``
(the maintainer's folder of local models), and the package's usual
``CONTSTIM_DATASETS``.
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pandas as pd

from ..significance import ALPHA, p_text, stars
from .board_html import panel_tables
from .policy import grouped_rows, load_entries
from .table import COLUMNS, panels
from .validate import MAX_BYTES
from .spec_policy import admit
from .verification import validate_and_rescore

ENV_RESULTS = "CONTSTIM_LEADERBOARD_RESULTS"
ENV_QUEUE = "CONTSTIM_LEADERBOARD_QUEUE"
ENV_ALLOW_EVAL = "CONTSTIM_LEADERBOARD_ALLOW_EVAL"
ENV_RESCORE = "CONTSTIM_LEADERBOARD_RESCORE"

TITLE = "contstim-bench leaderboard"
INTRO = (
    "How well do a language model's sentence probabilities predict which of two sentences people judge "
    "more likely? Models are scored on controversial sentence pairs (Golan et al. 2023) against human "
    "choices: binarised accuracy, its noise ceiling, and signed-rank cosine similarity (SRCS)."
)
ABOUT = """
## What is measured
Each trial shows a participant two sentences; a model predicts the choice by comparing its
natural-log probabilities of the two sentences. **Accuracy** is the share of trials where the model
prefers the sentence the participant chose, averaged over participants. The **noise ceiling** is
how well the other participants' majority vote predicts each participant (lower bound) or the vote
including the participant (upper bound); **normalised accuracy** = accuracy / lower ceiling.
**SRCS** (signed-rank cosine similarity) also weighs the participant's confidence.
Significance: two-sided Wilcoxon signed-rank tests across participants, Benjamini-Hochberg adjusted;
* = q < .05. Reference models are evaluated on the trials that target them.

## How submissions are checked
A submission is a result JSON as written by `contstim evaluate --model SPEC --output FILE`. Nothing
in it is executed. The leaderboard checks its schema, that the dataset fingerprint and format are
known, that every benchmark sentence has a finite log-probability, and recomputes **every score**
from those log-probabilities (differences over 1e-9 are rejected). A second result of a model already
on the board (the same weights' content fingerprint, scorer settings and revision, whatever its name)
is a duplicate. Log-probabilities must be finite and at most 0, and the names of the paper's
reference models (gpt2, roberta, ...) are reserved for their published values.

## Verified and unverified results
A valid result is **verified** only when its model spec was loaded here and re-scored every
sentence to the submitted log-probabilities (within 1e-3 nats: batch size and hardware move
float32 log-probabilities by up to about 1.4e-4); one whose re-scored values differ
is refused. A valid result whose model cannot be re-scored here is **unverified**: it is listed in
its own table, ranked only among the unverified results and never with the verified ones, since
its log-probabilities could have been fitted to the human choices.
"""

SHOWN = {
    "rank_text": "Rank",
    "model": "Model",
    "comparison": "Ranked among",
    "not_ranked": "Not ranked because",
    "selection": "Selection",
    "n_units": "Units",
    "accuracy": "Accuracy",
    "accuracy_stderr": "SE",
    "accuracy_ceiling_lower": "Ceiling",
    "accuracy_normalised": "Normalised",
    "p_accuracy_vs_ceiling": "p vs ceiling",
    "p_accuracy_vs_leader": "p vs leader",
    "srcs": "SRCS",
    "srcs_stderr": "SRCS SE",
    "srcs_ceiling_lower": "SRCS ceiling",
    "p_srcs_vs_ceiling": "SRCS p vs ceiling",
    "p_srcs_vs_leader": "SRCS p vs leader",
    "revision": "Revision",
}
"""Columns of the app's table (keys of :data:`contstim_bench.leaderboard.table.COLUMNS`) -> header."""


BOARD_COLUMNS = {
    "rank_text": "Rank", "model": "Model", "selection": "Selection", "n_units": "Units", "accuracy": "Accuracy",
    "accuracy_ceiling_lower": "Ceiling (lower)", "accuracy_ceiling_upper": "Ceiling (upper)",
    "accuracy_normalised": "Normalised", "p_accuracy_vs_ceiling": "p vs ceiling", "p_accuracy_vs_leader": "p vs leader",
    "accuracy_stderr": "± after a mean", "srcs": "SRCS",
    "comparison": "Ranked among", "not_ranked": "not ranked",
}
"""The columns of the tables the page shows (the site's), for the legend under them."""


def md_code(text: str) -> str:
    """``text`` as one Markdown code span, whatever backticks it holds (a fence longer than its
    longest run of backticks, padded with spaces), so a submitted name cannot end the span."""
    import re

    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return f"{fence} {text} {fence}" if longest else f"`{text}`"


def default_results_dir() -> Path:
    env = os.environ.get(ENV_RESULTS)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "leaderboard" / "results"


def panel_label(exp: str, cond: str) -> str:
    return f"{exp} / {cond}"


def table_frame(rows: list[dict], label: str) -> pd.DataFrame:
    """The rows of one panel (``"experiment / condition"``) as a DataFrame with the headers of
    :data:`SHOWN`, numbers rounded to 3 decimals, p-values as text."""
    exp, _, cond = label.partition(" / ")
    sub = [r for r in rows if r["experiment"] == exp and r["condition"] == cond]
    if not sub:
        raise ValueError(f"unknown panel {label!r}")
    frame = pd.DataFrame([{k: r[k] for k in SHOWN} for r in sub], columns=list(SHOWN))
    frame["not_ranked"] = frame["not_ranked"].fillna("")
    frame["rank_text"] = frame["rank_text"].replace("-", "\u2013")
    for col in frame.columns:
        if col.startswith("p_"):
            frame[col] = frame[col].map(_fmt_p)
        elif frame[col].dtype.kind == "f":
            frame[col] = frame[col].round(3)
    return frame.rename(columns=SHOWN)


def _fmt_p(p) -> str:
    """BH-adjusted p as text (:func:`~contstim_bench.analysis.inference.p_text`), ``*`` when q <
    .05; empty for the leader itself."""
    if p is None or pd.isna(p):
        return ""
    return p_text(float(p)) + stars(float(p), levels=((ALPHA, "*"),))


def unverified_frame(rows: list[dict], label: str) -> pd.DataFrame:
    """The unverified rows of one panel (:func:`table_frame` plus the reason), empty when none."""
    sub = [r for r in rows if not r.get("verified", True)]
    exp, _, cond = label.partition(" / ")
    if not any(r["experiment"] == exp and r["condition"] == cond for r in sub):
        return pd.DataFrame(columns=[*SHOWN.values(), "Why unverified"])
    frame = table_frame(sub, label)
    frame["Why unverified"] = [r["verification"] for r in sub if r["experiment"] == exp and r["condition"] == cond]
    return frame


def verified_frame(rows: list[dict], label: str) -> pd.DataFrame:
    """The verified rows of one panel (:func:`table_frame`), empty when none."""
    sub = [r for r in rows if r.get("verified", True)]
    exp, _, cond = label.partition(" / ")
    if not any(r["experiment"] == exp and r["condition"] == cond for r in sub):
        return pd.DataFrame(columns=list(SHOWN.values()))
    return table_frame(sub, label)


APP_CSS = """
.contstim-board table { border-collapse: collapse; font-size: .86rem; margin: 6px 0 14px; }
.contstim-board th, .contstim-board td { border-bottom: 1px solid #d9dde5; padding: 4px 8px; text-align: right; }
.contstim-board th { white-space: nowrap; word-break: keep-all; overflow-wrap: normal; font-weight: 600; }
.contstim-board td { white-space: nowrap; }
.contstim-board td.text, .contstim-board th.text { text-align: left; }
.contstim-board td.model { white-space: normal; min-width: 14rem; }
.contstim-board .not-ranked { display: block; color: #5b6475; font-size: .8rem; }
.contstim-board .note { color: #5b6475; font-size: .85rem; }
.contstim-board .sig { color: #c0392b; font-weight: 600; }
.contstim-board .table-wrap { overflow-x: auto; }
.contstim-board .folds { display: none; }
"""
"""The app's styling of the site's tables: headers never break inside a word (they scroll
sideways instead), model names wrap at ``_``/``-``/``.``/``/``, the reason a model is not ranked
sits under its name."""


def board_html(rows: list[dict], label: str) -> str:
    """The site's ranking tables of one panel (``"experiment / condition"``)."""
    exp, _, cond = label.partition(" / ")
    if not any(r["experiment"] == exp and r["condition"] == cond for r in rows):
        raise ValueError(f"unknown panel {label!r}")
    return f'<style>{APP_CSS}</style><div class="contstim-board">{panel_tables(rows, exp, cond)}</div>'


def submit_file(path, results_dir: Path, datasets_dir=None, queue_dir: Path | None = None, rescore: bool = False) -> str:
    """Validate one uploaded file; Markdown saying why it is refused, or that it is accepted and
    whether it is verified (with ``rescore``, its model spec is re-scored here under the policy of
    :mod:`.spec_policy`; otherwise it stays unverified until the maintainer re-scores it).  A
    valid file is queued (with ``queue_dir``) as ``<sha256 of its bytes>.json``: no upload
    replaces another, and the same file uploaded twice is answered as a duplicate."""
    if path is None:
        return "**Refused**: no file uploaded."
    path = Path(path)
    if path.stat().st_size > MAX_BYTES:
        return f"**Refused**: the file is larger than {MAX_BYTES:,} bytes."
    [checked] = validate_and_rescore([path], results_dir=results_dir, datasets_dir=datasets_dir, rescore_models=rescore)
    if not checked.ok:
        items = "\n".join(f"- {p}" for p in checked.problems)
        return f"**Refused**: the submission is invalid.\n\n{items}"
    name, rev = checked.key
    text = f"**Valid**: model {md_code(name)} (revision {md_code(rev[:12])}); every score matches its log-probabilities."
    if checked.verified:
        text += f" **Verified**: {checked.verification.removeprefix('verified: ')}."
    else:
        reason = checked.verification.removeprefix("unverified: ")
        if not rescore:
            reason = "it was not re-scored on this server; the maintainer re-scores it from its model spec"
        text += (f" **Unverified**: {reason}. Until it is verified it is listed among the unverified results, "
                 "not ranked with the verified ones.")
    if queue_dir is not None:
        text += " " + queue(path, queue_dir)
    return text


def queue(path: Path, queue_dir: Path) -> str:
    """Copy an accepted upload into ``queue_dir`` as ``<sha256 of its bytes>.json`` (created
    exclusively: never over another file); the sentence that says what happened."""
    data = path.read_bytes()
    queue_dir.mkdir(parents=True, exist_ok=True)
    target = queue_dir / f"{hashlib.sha256(data).hexdigest()}.json"
    try:
        with open(target, "xb") as out:
            out.write(data)
    except FileExistsError:
        return "**Duplicate**: this exact file is already queued for the maintainer; nothing was added."
    return "It is queued for the maintainer."


def evaluate_spec(spec: str, datasets_dir=None) -> str:
    """Run the evaluation of a model spec on the server (only where the maintainer enabled it),
    under the policy of :mod:`.spec_policy` (a typed spec is a submission too).  A failure is
    answered with its kind only: an error message could quote a file of the server."""
    from ..driver import evaluate
    from ..report.contstim import summary_table
    from ..scoring.spec import ModelSpec

    spec = (spec or "").strip()
    if not spec:
        return "**Refused**: no model spec given."
    admitted = admit(spec)
    if not admitted.admitted:
        return f"**Refused**: {admitted.reason}."
    try:
        shown = None if admitted.spec == spec else ModelSpec.parse(spec).evaluated_name  # never a local path
        result = evaluate(admitted.spec, ["contstim.pll"], datasets_dir=datasets_dir, log=lambda m: None,
                          name=shown)["contstim.pll"]
    except (ValueError, FileNotFoundError, RuntimeError, OSError) as exc:  # a KeyError is a bug: not caught
        return f"**Evaluation failed**: the model spec {spec!r} could not be loaded or run here ({type(exc).__name__})."
    shown_model = {**result["model"], "spec": spec, "spec_typed": spec, "folder": None}  # not the loaded local path
    return "```\n" + summary_table({**result, "model": shown_model}) + "\n```"


def create_app(results_dir: str | os.PathLike | None = None, allow_eval: bool | None = None, datasets_dir=None, queue_dir=None,
               rescore: bool | None = None):
    """Build the ``gr.Blocks`` app over ``results_dir`` (validated and, unless ``rescore`` is
    False or ``CONTSTIM_LEADERBOARD_RESCORE=0``, re-scored at start: :func:`.policy.load_entries`)."""
    import gradio as gr

    results_dir = Path(results_dir) if results_dir is not None else default_results_dir()
    if allow_eval is None:
        allow_eval = os.environ.get(ENV_ALLOW_EVAL, "") in ("1", "true", "yes")
    if rescore is None:
        rescore = os.environ.get(ENV_RESCORE, "1") not in ("0", "false", "no")
    if queue_dir is None and os.environ.get(ENV_QUEUE):
        queue_dir = Path(os.environ[ENV_QUEUE])
    entries = load_entries(results_dir, validate=True, datasets_dir=datasets_dir, rescore=rescore,
                           log=lambda msg: print(msg, file=sys.stderr))
    results = [c.result for c in entries]
    rows = grouped_rows(entries)
    labels = [panel_label(e, c) for e, c in panels(results)]
    default = next((lab for lab in labels if lab.endswith(" / all")), labels[0])

    with gr.Blocks(title=TITLE) as demo:
        gr.HTML(f"<h1 style='text-align:center'>{TITLE}</h1>")
        gr.Markdown(INTRO)
        with gr.Tabs():
            with gr.Tab("Leaderboard", id="leaderboard"):
                panel = gr.Dropdown(labels, value=default, label="Experiment / condition")
                board = gr.HTML(value=board_html(rows, default))
                panel.change(lambda lab: board_html(rows, lab), inputs=panel, outputs=board, api_name="board")
                # the same rows as data, for API clients (the page shows the tables above)
                table = gr.Dataframe(value=verified_frame(rows, default), interactive=False, visible=False,
                                     label="Ranking of the verified models")
                panel.change(lambda lab: verified_frame(rows, lab), inputs=panel, outputs=table, api_name="table")
                unverified = gr.Dataframe(value=unverified_frame(rows, default), interactive=False, visible=False,
                                          label="Unverified models (ranked only among themselves)")
                panel.change(lambda lab: unverified_frame(rows, lab), inputs=panel, outputs=unverified,
                             api_name="unverified_table")
                gr.Markdown("Columns: " + "; ".join(f"**{label}**: {COLUMNS[key]}" for key, label in BOARD_COLUMNS.items())
                            + ". Click a model's name on the static site for its page.")
            with gr.Tab("About", id="about"):
                gr.Markdown(ABOUT)
            with gr.Tab("Submit", id="submit"):
                gr.Markdown(
                    "Upload a result file written by `contstim evaluate --model SPEC --output FILE`. "
                    "It is validated here: every score is recomputed from its log-probabilities."
                )
                upload = gr.File(label="Result JSON", file_types=[".json"], type="filepath")
                check = gr.Button("Validate submission", variant="primary")
                status = gr.Markdown()
                check.click(
                    lambda f: submit_file(f, results_dir, datasets_dir, queue_dir, rescore=allow_eval),
                    inputs=upload, outputs=status, api_name="submit",
                )
                if allow_eval:
                    gr.Markdown("### Evaluate a model on this server\nA model spec, e.g. `precomputed:bert` or `smollm2-135m`.")
                    spec = gr.Textbox(label="Model spec")
                    run = gr.Button("Evaluate")
                    out = gr.Markdown()
                    run.click(lambda s: evaluate_spec(s, datasets_dir), inputs=spec, outputs=out, api_name="evaluate")
    return demo
