"""Fuzz tests (Hypothesis, bounded: a few hundred examples each, no per-example deadline, well
under a minute in all) of the three places that read input from anyone:

- the result-file reader :func:`contstim_bench.results.io.parse_json` (leaderboard submissions):
  any bytes give a dict or a ValidationError naming the problem, never another exception (no
  RecursionError, no UnicodeError, no ValueError from Python's 4,300-digit int limit), every JSON
  object round-trips, and numbers of any size (integers of up to 8,001 digits, exponents of up
  to 400 digits) are read exactly or refused by name;
- the ``evaluate`` metric's input validation
  (:func:`contstim_bench.analysis.metric_inputs.check_metric_inputs`, run by the module's
  ``add_batch``): any mix of values gives a ValueError or inputs that the metric's typed features
  encode unchanged (nothing truncated);
- the experiment server's request parser (:func:`contstim_bench.experiment.server.parse_body`)
  and its two POST routes, at the default body limit and at a large one: any body gives a 4xx or
  a success, never a 500.
"""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contstim_bench.analysis.metric_inputs import check_metric_inputs
from contstim_bench.results.io import MAX_DEPTH, MAX_INT, ValidationError, parse_json

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ_SLOW = settings(max_examples=120, deadline=None,
                     suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=30)
brackets = st.integers(0, 3000).flatmap(
    lambda n: st.sampled_from(["[", "{\"a\":", "[{\"k\": "]).map(lambda opener: opener * n))
digit_runs = st.tuples(st.sampled_from("123456789"), st.text("0123456789", min_size=1, max_size=8),
                       st.integers(0, 30) | st.integers(300, 320) | st.integers(4290, 8000)
                       ).map(lambda t: t[0] + (t[1] * (t[2] // len(t[1]) + 1))[:t[2]])
int_literals = st.tuples(st.sampled_from(["", "-"]), digit_runs | st.just("0")).map("".join)
"""JSON integer literals of 1 to 8,001 digits: short, around the float range's 309 digits, and
past Python's 4,300-digit int limit."""
float_literals = st.tuples(int_literals, st.sampled_from(["", ".5", ".000001", ".9999999999999999999"]),
                           st.sampled_from(["e", "E-", "e+"]), digit_runs.map(lambda d: d[:400])).map("".join)
"""JSON float literals with exponents of up to 400 digits (overflow to inf, underflow to 0.0)."""
numbers_in_json = st.tuples(st.sampled_from(['{"trial": %s}', '{"rating": [%s]}', '{"external_id": %s}', '[%s]',
                                             '{"trial": 1, "rating": 3, "reaction_time_ms": %s}']),
                            st.lists(int_literals | float_literals, min_size=1, max_size=3)
                            ).map(lambda t: (t[0] % ", ".join(t[1])).encode())
"""Bodies and files holding such numbers (with two or three of them in an object's value:
malformed JSON after the first number, which is read first)."""
json_like = st.one_of(
    numbers_in_json,
    st.binary(max_size=300),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.tuples(brackets, json_values.map(json.dumps), st.text(alphabet="[]{}\",:\\ 0e-", max_size=40))
    .map(lambda parts: "".join(parts).encode()),
    st.tuples(st.text(alphabet='{}[]":,1a\\ ', max_size=200)).map(lambda parts: parts[0].encode()),
)


@FUZZ
@given(json_like)
def test_result_reader_never_fails_unexpectedly(data):
    try:
        out = parse_json(data, "fuzz")
    except ValidationError as exc:
        assert exc.problems and all(isinstance(p, str) and p for p in exc.problems)
        return
    assert isinstance(out, dict)


@FUZZ
@given(st.dictionaries(st.text(max_size=10), json_values, max_size=6))
def test_every_json_object_round_trips(obj):
    assert parse_json(json.dumps(obj), "fuzz") == obj
    assert parse_json(json.dumps(obj).encode(), "fuzz") == obj


@FUZZ
@given(int_literals)
def test_integers_of_any_size_are_exact_or_refused_by_name(literal):
    digits = len(literal.lstrip("-"))
    if digits <= len(str(MAX_INT)) and abs(int(literal)) <= MAX_INT:
        assert parse_json('{"n": %s}' % literal, "fuzz.json") == {"n": int(literal)}
        return
    with pytest.raises(ValidationError) as refused:
        parse_json('{"n": %s}' % literal, "fuzz.json")
    assert str(refused.value).startswith(f"fuzz.json: integer {literal[:12]}")
    assert f"has {digits:,} digits: larger than any number a field can hold" in str(refused.value)


@FUZZ
@given(float_literals)
def test_floats_of_any_size_read_as_python_floats(literal):
    """A float literal reads as Python's float() of it: beyond the float range as +-inf (refused
    later by the checks of the field it is in), below it as 0.0."""
    value = parse_json('{"x": %s}' % literal, "fuzz.json")["x"]
    assert isinstance(value, float) and value == float(literal)


@FUZZ
@given(st.integers(1, 200))
def test_depth_limit_is_exact(depth):
    text = '{"a": ' + "[" * depth + "]" * depth + "}"  # nested depth + 1 levels
    if depth + 1 <= MAX_DEPTH:
        assert parse_json(text) == json.loads(text)
    else:
        with pytest.raises(ValidationError, match="nested"):
            parse_json(text)


# --------------------------------------------------------------------------- metric inputs

anything = st.one_of(st.integers(-10, 10), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4),
                     st.none(), st.booleans(), st.sampled_from([1, 2, 3, 4, 5, 6, 3.5, 6.0, 1e300]))


@FUZZ
@given(st.integers(1, 8).flatmap(lambda n: st.tuples(
    st.lists(anything, min_size=n, max_size=n + 1),
    st.lists(anything, min_size=n - 1, max_size=n),
    st.lists(anything, min_size=n, max_size=n))))
def test_metric_validation_passes_only_exact_values(columns):
    predictions, references, group = columns
    try:
        check_metric_inputs({"predictions": predictions, "references": references, "group": group})
    except ValueError as exc:
        assert str(exc).startswith("invalid contstim metric input: ")
        return
    assert len(predictions) == len(references) == len(group)
    assert all(math.isfinite(float(p)) and not isinstance(p, (bool, str)) for p in predictions)
    assert all(r in range(1, 7) and float(r) == int(r) and not isinstance(r, (bool, str)) for r in references)
    assert all(float(g) == int(g) and not isinstance(g, (bool, str)) for g in group)


@pytest.fixture(scope="module")
def metric_features(tmp_path_factory):
    evaluate = pytest.importorskip("evaluate")
    import contstim_bench

    metric = evaluate.load(contstim_bench.metric_path(), cache_dir=str(tmp_path_factory.mktemp("evaluate")))
    return metric.info.features


@FUZZ_SLOW
@given(st.lists(st.tuples(st.sampled_from([1, 2, 3, 4, 5, 6, 2.0, 3.5, 0, 7, "4"]),
                          st.sampled_from([1, 2, 10, 1.0, 2.5, -1, "x"])), min_size=1, max_size=6))
def test_what_the_metric_accepts_its_features_keep_unchanged(metric_features, rows):
    references = [r for r, _ in rows]
    group = [g for _, g in rows]
    try:
        check_metric_inputs({"predictions": [0.5] * len(rows), "references": references, "group": group})
    except ValueError:
        return
    encoded = metric_features.encode_batch({"predictions": [0.5] * len(rows), "references": references, "group": group,
                                            **{k: ["x"] * len(rows) for k in metric_features
                                               if k not in ("predictions", "references", "group")}})
    assert encoded["references"] == references and encoded["group"] == group  # nothing truncated


# --------------------------------------------------------------------------- server request parser


@FUZZ
@given(json_like)
def test_request_parser_answers_4xx_or_a_dict(data):
    from contstim_bench.experiment.server import ApiError, parse_body

    try:
        out = parse_body(data)
    except ApiError as exc:
        assert exc.status in (400, 413) and exc.message
        return
    assert isinstance(out, dict)


@pytest.fixture(scope="module", params=[2048, 64 * 1024], ids=["default-body-limit", "64KiB-body-limit"])
def server_client(tmp_path_factory, request):
    pytest.importorskip("flask")
    from contstim_bench.experiment.export import export_experiment
    from contstim_bench.experiment.server import create_app
    from small_study import small_design

    tmp = tmp_path_factory.mktemp("fuzz-server")
    app = create_app(export_experiment(small_design(), tmp / "exp"), tmp / "r.sqlite", signups_per_minute=10_000,
                     max_body_bytes=request.param)
    client = app.test_client()
    token = client.post("/api/participants", json={"external_id": None}).json["token"]
    yield client, token
    app.extensions["contstim_store"].close()


bodies = st.one_of(json_like, st.dictionaries(st.sampled_from(["trial", "rating", "reaction_time_ms", "external_id",
                                                                "x"]), json_values, max_size=4)
                   .map(lambda d: json.dumps(d).encode()))


@FUZZ_SLOW
@given(bodies, st.sampled_from(["/api/responses", "/api/participants"]))
def test_server_routes_never_answer_500(server_client, body, route):
    client, token = server_client
    r = client.post(route, data=body, content_type="application/json", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code < 500, (r.status_code, r.data[:200])
    assert r.is_json and (("error" in r.json) == (r.status_code >= 400))
