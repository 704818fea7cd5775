"""Fuzzing the bot service in-process: schemathesis from its own OpenAPI schema, and hypothesis
with the values JSON parsers let through that schemas never generate (NaN, infinities, numbers
too large for a float, lone surrogates, booleans). Every answer must be below 500."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("onnxruntime")
schemathesis = pytest.importorskip("schemathesis")

from fastapi.testclient import TestClient  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cuatrola_serve.guard import ServiceLimits  # noqa: E402
from cuatrola_serve.serve import create_app  # noqa: E402

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
LIMITS = ServiceLimits(allow_seed=True, search_per_client=8)


@pytest.fixture(scope="module")
def fuzz_app(onnx_model):
    return create_app(onnx_model, LIMITS)


@pytest.mark.parametrize("mode", ["positive", "negative"])
def test_schemathesis_finds_no_server_error(fuzz_app, mode):
    """Cases drawn from the service's own schema (valid ones, and ones that break it): none gets a 5xx."""
    from schemathesis.generation.modes import GenerationMode

    schema = schemathesis.openapi.from_asgi("/openapi.json", fuzz_app)
    seen = []

    @given(case=schema.as_strategy(GenerationMode(mode)))
    @FUZZ
    def check(case):
        response = case.call()
        seen.append(response.status_code)
        assert response.status_code < 500, (case.method, case.path, case.body, response.status_code, response.text)

    check()
    assert len(seen) >= 20 and (mode == "negative" or 200 in seen), "the fuzzer reached the endpoints"


# --------------------------------------------------------------------------- beyond the schema
odd_numbers = st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "1" + "0" * 400, "-0.0", "1.5"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True),
                    st.text(max_size=8), st.sampled_from(["\ud800", "\udfff", "pass", "master", "online"]))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner,
                                                                                         max_size=4), max_leaves=12)

STATE = {"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}
BODIES = {
    "/v1/act": {"state": STATE, "level": "expert"},
    "/v1/games": {"seat": 0, "bots": ["random", "random", "expert"], "rules": "online", "target": 3},
}


def _dumps(body) -> bytes:
    """JSON as a lax client would send it: NaN and Infinity allowed, lone surrogates escaped."""
    return json.dumps(body, allow_nan=True).encode()


def _post(client, path: str, data: bytes):
    return client.post(path, content=data, headers={"content-type": "application/json"})


def _with(body: dict, path: tuple, value):
    """A copy of ``body`` with the field at ``path`` set to ``value``."""
    body = json.loads(json.dumps(body))
    node = body
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return body


FIELDS = [("/v1/act", p) for p in [("state",), ("level",), ("state", "seat"), ("state", "hand"), ("state", "bids"),
                                   ("state", "tricks"), ("state", "score"), ("state", "rules"), ("state", "contract")]]
FIELDS += [("/v1/games", p) for p in [("seat",), ("bots",), ("rules",), ("target",), ("seed",)]]


@given(where=st.sampled_from(FIELDS), value=values)
@FUZZ
def test_any_value_in_any_field_gets_an_answer_below_500(fuzz_app, where, value):
    client = TestClient(fuzz_app)
    path, field = where
    r = _post(client, path, _dumps(_with(BODIES[path], field, value)))
    assert r.status_code < 500, (path, field, value, r.status_code, r.text)
    json.loads(r.content.decode("ascii"))


@given(where=st.sampled_from(FIELDS), number=odd_numbers)
@FUZZ
def test_numbers_json_never_meant_get_an_answer_below_500(fuzz_app, where, number):
    client = TestClient(fuzz_app)
    path, field = where
    marker = "__odd__"
    text = _dumps(_with(BODIES[path], field, marker)).replace(f'"{marker}"'.encode(), number.encode())
    r = _post(client, path, text)
    assert 400 <= r.status_code < 500, (path, field, number, r.status_code, r.text)


@given(body=values)
@FUZZ
def test_any_body_on_a_game_gets_an_answer_below_500(fuzz_app, body):
    client = TestClient(fuzz_app)
    gid = client.post("/v1/games", json={"bots": ["random", "random", "random"]}).json()["id"]
    for data in (_dumps(body), _dumps({"action": body})):
        r = _post(client, f"/v1/games/{gid}/act", data)
        assert r.status_code < 500, (body, r.status_code, r.text)
