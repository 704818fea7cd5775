"""The bot service under hostile input and load: every bad request a 4xx, limits that hold, and
model files checked before anything is served."""

from __future__ import annotations

import hashlib
import json
import shutil
import socket
import time
from pathlib import Path

import numpy as np
import pytest
from helpers import running_server

from cuatrola_env.game import Game
from cuatrola_env.observation import OBS_DIM
from cuatrola_serve.bot import seat_state

pytest.importorskip("fastapi")
ort = pytest.importorskip("onnxruntime")
onnx = pytest.importorskip("onnx")

from fastapi.testclient import TestClient  # noqa: E402

from cuatrola_serve.guard import Busy, GameStore, ServiceLimits  # noqa: E402
from cuatrola_serve.serve import create_app  # noqa: E402

BASE = {"seat": 1, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}


@pytest.fixture(scope="module")
def app(onnx_model):
    return create_app(onnx_model, ServiceLimits(games_per_client=3, max_games=6, search_queue=3, search_per_client=2))


@pytest.fixture(scope="module")
def client(app):
    return TestClient(app)


def raw(client, path: str, text: str):
    """POST ``text`` as the body, byte for byte (json.dumps would refuse NaN and lone surrogates)."""
    return client.post(path, content=text.encode("utf-8", "surrogatepass"), headers={"content-type": "application/json"})


def new_game(client, **body) -> str:
    r = client.post("/v1/games", json={"bots": ["heuristic", "random", "random"], **body})
    assert r.status_code == 200, r.text
    return r.json()["id"]


# --------------------------------------------------------------------------- strange bytes
BAD_NUMBERS = ["NaN", "Infinity", "-Infinity", "1e400", '"\\ud800"', "true", "1.0", '"1"']


@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_non_finite_huge_surrogate_and_boolean_values_get_a_4xx(client, bad):
    """Each value in an integer field of each endpoint: refused with 422 (never a 500 or a reset
    connection), and the service stays healthy."""
    gid = new_game(client)
    bodies = {
        "/v1/act": f'{{"state": {{"seat": {bad}, "dealer": 0, "muestra": 13, "hand": [0, 4, 9, 17, 19]}}}}',
        "/v1/games": f'{{"seat": {bad}}}',
        f"/v1/games/{gid}/act": f'{{"action": {bad}}}',
    }
    for path, text in bodies.items():
        r = raw(client, path, text)
        assert r.status_code == 422, (path, bad, r.status_code, r.text)
        assert r.json()["detail"][0]["loc"][-1] in ("seat", "action")
    assert client.get("/v1/health").status_code == 200


def test_a_lone_surrogate_in_a_key_or_string_field_gets_a_4xx(client):
    for text in ('{"state": {"\\ud800": 1}}', f'{{"state": {json.dumps(BASE)}, "level": "\\udfff"}}',
                 f'{{"state": {json.dumps(BASE)}, "\\ud800x": 1}}'):
        r = raw(client, "/v1/act", text)
        assert r.status_code == 422, r.text
        json.loads(r.content.decode("ascii"))  # the answer itself is plain, valid JSON


def test_a_boolean_is_not_an_integer(client):
    """``{"action": true}`` would have played action 1; ``"seat": true`` seat 1."""
    gid = new_game(client)
    assert client.post(f"/v1/games/{gid}/act", json={"action": True}).status_code == 422
    assert client.post("/v1/act", json={"state": {**BASE, "seat": True}}).status_code == 422
    assert client.post("/v1/act", json={"state": {**BASE, "hand": [0, 4, 9, 17, True]}}).status_code == 422


def test_tricks_must_have_the_contracts_size(client):
    """Rule 'a trick is one card from each seat in play' (3 when a declarer's partner sits out):
    a state grouping the plays otherwise is refused, however the cards would replay."""
    game = Game(seed=4)
    while game.single.phase == 0:
        game.step(20)  # everyone passes: tricks of 4
    for _ in range(5):
        game.step(game.legal_actions()[0])
    state = seat_state(game)
    assert [len(t) for t in state["tricks"]] == [4, 1]
    plays = [p for t in state["tricks"] for p in t]
    for grouping in ([plays[:3], plays[3:]], [plays[:2], plays[2:4], plays[4:]], [plays]):
        r = client.post("/v1/act", json={"state": {**state, "tricks": grouping}})
        assert r.status_code in (400, 422), r.text
        assert "tricks" in r.text
    assert client.post("/v1/act", json={"state": state}).status_code == 200


def test_every_status_an_endpoint_returns_is_in_the_schema(client):
    paths = client.get("/openapi.json").json()["paths"]
    want = {("/v1/act", "post"): {"200", "400", "408", "413", "422", "503"},
            ("/v1/games", "post"): {"200", "400", "408", "413", "422", "503"},
            ("/v1/games/{gid}", "get"): {"200", "404", "422"},
            ("/v1/games/{gid}/act", "post"): {"200", "400", "404", "408", "409", "413", "422", "503"}}
    for (path, method), codes in want.items():
        assert codes <= set(paths[path][method]["responses"]), (path, method, sorted(paths[path][method]["responses"]))


# --------------------------------------------------------------------------- games
def test_a_client_chosen_seed_is_refused_unless_debugging(client, onnx_model):
    r = client.post("/v1/games", json={"bots": ["random"] * 3, "seed": 12345})
    assert r.status_code == 400 and "--allow-seed" in r.text
    debug = TestClient(create_app(onnx_model, ServiceLimits(allow_seed=True)))
    hands = [debug.post("/v1/games", json={"bots": ["random"] * 3, "seed": 12345}).json()["hand"] for _ in range(2)]
    assert hands[0] == hands[1], "with --allow-seed the seed fixes the deal"


def test_no_client_can_evict_another_clients_game():
    app = create_app(None, ServiceLimits(games_per_client=3, max_games=6))
    alice, mallory = TestClient(app, client=("10.0.0.1", 1)), TestClient(app, client=("10.0.0.2", 1))
    mine = new_game(alice)
    for _ in range(20):  # far more than the 3 a client may hold
        new_game(mallory)
    assert alice.get(f"/v1/games/{mine}").status_code == 200, "another client's games never push out alice's"
    assert sum(h.owner == "10.0.0.2" for h in app.state.games._games.values()) == 3
    others = [TestClient(app, client=(f"10.0.1.{i}", 1)) for i in range(3)]
    for c in others[:2]:  # 6 games in all: the store is full
        new_game(c)
    r = others[2].post("/v1/games", json={"bots": ["random"] * 3})
    assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
    assert alice.get(f"/v1/games/{mine}").status_code == 200


def test_idle_games_expire():
    now = [0.0]
    store = GameStore(max_games=2, per_client=2, idle=60, clock=lambda: now[0])
    a = store.add("table a", "x")
    store.add("table b", "y")
    with pytest.raises(Busy):
        store.add("table c", "z")
    now[0] = 30
    assert store.get(a) is not None  # used: its idle time starts again
    now[0] = 70
    store.add("table c", "z")  # b has been idle 70 s: forgotten, room for c
    assert len(store) == 2 and store.get(a) is not None


# --------------------------------------------------------------------------- search
def test_a_full_search_queue_answers_503_with_retry_after_and_cheap_levels_still_play(app, client):
    pool = app.state.search_pool
    body = {"state": BASE, "level": "master"}
    held = [pool.slot(f"other{i}") for i in range(pool.capacity)]
    for h in held:
        h.__enter__()
    try:
        r = client.post("/v1/act", json=body)
        assert r.status_code == 503 and int(r.headers["retry-after"]) >= 1, r.text
        assert client.post("/v1/act", json={"state": BASE, "level": "expert"}).status_code == 200
        assert client.get("/v1/health").json()["search"]["in_use"] == pool.capacity
    finally:
        for h in held:
            h.__exit__(None, None, None)
    assert client.post("/v1/act", json=body).status_code == 200


def test_one_client_cannot_take_the_whole_search_queue(app):
    pool = app.state.search_pool
    with pool.slot("testclient"), pool.slot("testclient"):
        with pytest.raises(Busy, match="this client already has 2"):
            with pool.slot("testclient"):
                pass
        with pool.slot("someone else"):
            pass


def test_a_killed_search_worker_is_replaced_and_its_request_answered(app, client):
    body = {"state": BASE, "level": "master"}
    assert client.post("/v1/act", json=body).status_code == 200
    pool = app.state.search_pool
    for proc in list(pool._executor._processes.values()):
        proc.kill()
        proc.join(timeout=10)
    answers = [client.post("/v1/act", json=body).status_code for _ in range(2)]
    assert answers[0] in (200, 503) and 500 not in answers
    for _ in range(100):  # the new worker loads the model, then plays
        r = client.post("/v1/act", json=body)
        if r.status_code == 200:
            break
        time.sleep(0.2)
    assert r.status_code == 200, r.text


# --------------------------------------------------------------------------- slow clients
@pytest.fixture(scope="module")
def live_server(onnx_model):
    """The service on a loopback port with short header and body time-outs."""
    from cuatrola_serve.serve import _http_protocol

    limits = ServiceLimits(header_timeout=0.5, body_timeout=0.5)
    with running_server(create_app(None, limits), http=_http_protocol(limits)) as port:
        yield port


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing, or None if it kept the connection open."""
    sock.settimeout(seconds)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except TimeoutError:
        return None
    return got


def test_stalled_headers_are_cut_off(live_server):
    socks = [socket.create_connection(("127.0.0.1", live_server)) for _ in range(20)]
    for s in socks:
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
    assert all(_closed_within(s, 5.0) is not None for s in socks), "every stalled connection is closed"
    with socket.create_connection(("127.0.0.1", live_server)) as s:  # a normal request still works
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert _closed_within(s, 5.0).startswith(b"HTTP/1.1 200")


def test_a_body_that_never_arrives_gets_408(live_server):
    with socket.create_connection(("127.0.0.1", live_server)) as s:
        s.sendall(b"POST /v1/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        answer = _closed_within(s, 5.0)
    assert answer is not None and answer.startswith(b"HTTP/1.1 408"), answer


# --------------------------------------------------------------------------- model files
def _copy_model(onnx_model: str, tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "m.onnx"
    shutil.copy(onnx_model, path)
    return path, json.loads(Path(onnx_model).with_suffix(".json").read_text())


def _write_card(path: Path, card: dict) -> None:
    card = {**card, "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
    path.with_suffix(".json").write_text(json.dumps(card))


def _graph(path: Path, inputs: dict, favour_illegal: bool = True) -> None:
    """An ONNX graph with the given inputs; its logits favour the illegal actions (it ignores the mask)."""
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.zeros((inputs["observation"][1][1], 24), np.float32), "w")
    nodes = [helper.make_node("MatMul", ["observation", "w"], ["base"])]
    if "action_mask" in inputs:
        nodes += [helper.make_node("Not", ["action_mask"], ["illegal"]),
                  helper.make_node("Cast", ["illegal"], ["bonus"], to=TensorProto.FLOAT),
                  helper.make_node("Add", ["base", "bonus"], ["logits"])]
    else:
        nodes += [helper.make_node("Identity", ["base"], ["logits"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(k, t, s) for k, (t, s) in inputs.items()],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 24])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    path.write_bytes(model.SerializeToString())


def test_a_model_that_does_not_fit_stops_start_up_with_one_line(onnx_model, tmp_path, capsys):
    from onnx import TensorProto

    from cuatrola_serve.bot import Bot, ModelError
    from cuatrola_serve.serve import main

    path, card = _copy_model(onnx_model, tmp_path)
    cases = {
        "field 'rules'": lambda: _write_card(path, {k: v for k, v in card.items() if k != "rules"}),
        "field 'training'": lambda: _write_card(path, {k: v for k, v in card.items() if k != "training"}),
        "not a valid ONNX model": lambda: (path.write_bytes(b"\x08junk" * 100), _write_card(path, card)),
        "the graph's inputs are": lambda: (_graph(path, {"observation": (TensorProto.FLOAT, ["N", OBS_DIM]),
                                                        "extra": (TensorProto.FLOAT, ["N", 3])}), _write_card(path, card)),
        "input 'observation' is": lambda: (_graph(path, {"observation": (TensorProto.FLOAT, ["N", 100]),
                                                        "action_mask": (TensorProto.BOOL, ["N", 24])}), _write_card(path, card)),
    }
    for message, make in cases.items():
        make()
        with pytest.raises(ModelError, match=message):
            Bot.load(path)
        assert main(["--model", str(path)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: ") and "\n" not in err and message in err


def test_the_bot_masks_a_model_that_ignores_the_mask(onnx_model, tmp_path):
    """A well-formed graph whose logits favour illegal actions: every answer is still legal."""
    from onnx import TensorProto

    path, card = _copy_model(onnx_model, tmp_path)
    _graph(path, {"observation": (TensorProto.FLOAT, ["N", OBS_DIM]), "action_mask": (TensorProto.BOOL, ["N", 24])})
    _write_card(path, card)
    client = TestClient(create_app(path))
    game = Game(seed=3)
    while not game.over:
        for level in ("expert", "strong", "beginner"):
            r = client.post("/v1/act", json={"state": seat_state(game), "level": level})
            assert r.status_code == 200, r.text
            assert r.json()["action"] in game.legal_actions()
        game.step(r.json()["action"])


def _external(path: Path, tensor_names: set[str]) -> None:
    """Move the named initializers of the model at ``path`` to an external file beside it (w.bin)."""
    from onnx import external_data_helper, load, save

    model = load(str(path))
    for t in model.graph.initializer:
        if t.name in tensor_names:
            external_data_helper.set_external_data(t, location="w.bin")
            (path.parent / "w.bin").write_bytes(t.raw_data or np.array(t.float_data, np.float32).tobytes())
            t.ClearField("raw_data")
            t.ClearField("float_data")
            t.data_location = 1  # EXTERNAL
    save(model, str(path))


def test_a_model_whose_weights_live_outside_the_file_is_refused(onnx_model, tmp_path, monkeypatch):
    """External initializers would be read from the current folder, unhashed: refused at load, so
    neither the bot nor the service ever serves them."""
    from onnx import TensorProto, helper, load, numpy_helper, save

    from cuatrola_serve.bot import Bot, ModelError

    path, card = _copy_model(onnx_model, tmp_path)
    first = load(str(path)).graph.initializer[0].name
    _external(path, {first})
    _write_card(path, card)
    monkeypatch.chdir(tmp_path)  # where onnxruntime would find w.bin
    with pytest.raises(ModelError, match="external files"):
        Bot.load(path)
    # the same inside a subgraph: a Constant node's tensor within an If branch
    path, card = _copy_model(onnx_model, tmp_path)
    model = load(str(path))
    const = numpy_helper.from_array(np.zeros(1, np.float32), "c")
    const.ClearField("raw_data")
    const.data_location = 1
    const.external_data.add(key="location", value="w.bin")
    branch = helper.make_graph([helper.make_node("Constant", [], ["k"], value=const)], "b", [],
                               [helper.make_tensor_value_info("k", TensorProto.FLOAT, [1])])
    model.graph.node.append(helper.make_node("If", ["cond"], ["unused"], then_branch=branch, else_branch=branch))
    save(model, str(path))
    _write_card(path, card)
    with pytest.raises(ModelError, match="external files"):
        Bot.load(path)


def test_a_model_card_with_an_absurd_number_is_a_model_error(onnx_model, tmp_path):
    from cuatrola_serve.bot import Bot, ModelError

    path, card = _copy_model(onnx_model, tmp_path)
    _write_card(path, card)
    text = path.with_suffix(".json").read_text()
    for bad in ("9" * 5000, "1e400", "NaN", str(2**64)):
        path.with_suffix(".json").write_text(text.replace(f'"obs_version": {card["obs_version"]}', f'"obs_version": {bad}'))
        with pytest.raises(ModelError, match="not a valid model card"):
            Bot.load(path)


def _memory_bomb(path: Path, obs_dim: int, kind: str) -> None:
    """A graph of a few hundred bytes with the bot's inputs and outputs whose one intermediate tensor
    takes gigabytes: a constant of a huge shape, or the outer product of two small vectors."""
    from onnx import TensorProto, helper, save

    nodes = [helper.make_node("Slice", ["observation", "st", "en", "ax"], ["head"]),
             helper.make_node("Mul", ["head", "total"], ["logits"])]
    inits = [helper.make_tensor("st", TensorProto.INT64, [1], [0]), helper.make_tensor("en", TensorProto.INT64, [1], [24]),
             helper.make_tensor("ax", TensorProto.INT64, [1], [1])]
    if kind == "constant of a huge shape":
        inits.append(helper.make_tensor("shape", TensorProto.INT64, [2], [30000, 28000]))
        nodes += [helper.make_node("ConstantOfShape", ["shape"], ["big"],
                                   value=helper.make_tensor("v", TensorProto.FLOAT, [1], [1.0]))]
    else:  # a column of 30,000 ones (a Range) plus a row of them
        inits += [helper.make_tensor(n, TensorProto.FLOAT, [], [v]) for n, v in (("zero", 0.0), ("n", 30000.0), ("one", 1.0))]
        inits += [helper.make_tensor("col", TensorProto.INT64, [2], [-1, 1]),
                  helper.make_tensor("row", TensorProto.INT64, [2], [1, -1])]
        nodes += [helper.make_node("Range", ["zero", "n", "one"], ["r"]),
                  helper.make_node("Reshape", ["r", "col"], ["c"]), helper.make_node("Reshape", ["r", "row"], ["w"]),
                  helper.make_node("Add", ["c", "w"], ["big"])]
    nodes.insert(-2, helper.make_node("ReduceSum", ["big"], ["total"], keepdims=0))
    graph = helper.make_graph(nodes, "bomb", [helper.make_tensor_value_info("observation", TensorProto.FLOAT, ["N", obs_dim]),
                                              helper.make_tensor_value_info("action_mask", TensorProto.BOOL, ["N", 24])],
                              [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 24])], initializer=inits)
    save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.mark.parametrize("kind", ["constant of a huge shape", "outer product"])
def test_a_small_graph_that_allocates_gigabytes_is_refused_at_load(onnx_model, tmp_path, kind):
    from cuatrola_serve.bot import Bot, ModelError

    path, card = _copy_model(onnx_model, tmp_path)
    _memory_bomb(path, card["obs_dim"], kind)
    _write_card(path, card)
    assert path.stat().st_size < 1000
    t0 = time.monotonic()
    with pytest.raises(ModelError, match="more memory than"):
        Bot.load(path)
    assert time.monotonic() - t0 < 5
