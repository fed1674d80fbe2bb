"""The selftest says what failed (its passing run: tests/test_cli_gui.py, through the CLI)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")


@pytest.mark.slow
def test_selftest_reports_a_failure(qapp, capsys, monkeypatch):
    import explorer.selftest as st

    def broken(*_a, **_k):
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr(st, "_export_panels", broken)
    assert st.run_selftest() == 1
    err = capsys.readouterr().err
    assert "selftest FAILED: export the panels: RuntimeError: renderer exploded" in err
