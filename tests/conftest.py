"""Shared fixtures: a small trained model exported to ONNX (for the bot, service and browser tests)."""

import pytest


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory):
    """A checkpoint of a few seconds of training (configs/tiny.yaml)."""
    pytest.importorskip("torch")
    from agents import training as train

    d = tmp_path_factory.mktemp("tiny_run")
    train.main(["--config", "configs/tiny.yaml", "--run-dir", str(d), "--eval-every", "0"])
    (ck,) = d.glob("*/checkpoint.pt")
    return str(ck)


@pytest.fixture(scope="session")
def onnx_model(tiny_checkpoint, tmp_path_factory):
    """``tiny_checkpoint`` exported to ONNX (its card beside it); the path of the .onnx file."""
    pytest.importorskip("onnxruntime")
    from agents.export import export

    out = tmp_path_factory.mktemp("model") / "cuatrola.onnx"
    export(tiny_checkpoint, str(out), check=0)
    return str(out)
