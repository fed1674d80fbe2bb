"""The selftest builds the window, runs every backend, renders and exports: it must pass."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")


@pytest.mark.slow
def test_selftest_returns_0(qapp, capsys):
    from explorer.selftest import run_selftest

    assert run_selftest() == 0
    out = capsys.readouterr().out
    assert "selftest passed" in out
    for backend in ("eager", "sdpa", "flash"):
        assert f"backend {backend} on cpu, float32" in out
    assert "export the panels" in out


@pytest.mark.slow
def test_selftest_reports_a_failure(qapp, capsys, monkeypatch):
    import explorer.selftest as st

    def broken(*_a, **_k):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr(st, "_export_panels", broken)
    assert st.run_selftest() == 1
    err = capsys.readouterr().err
    assert "selftest FAILED: export the panels: RuntimeError: renderer exploded" in err
