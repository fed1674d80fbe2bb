"""Keeping a trained run (issue 27, item 2): the lab's *Save run…* writes a run folder and says
where (or why not, in one line); a session saved after *Open in inspector* names the saved
folder, so it opens the model again; closing the window with a run trained here and unsaved
asks Save / Discard / Cancel; a session whose model folder is gone opens the rest and says so.

Tiny runs (a few ms a step); the training process starts in ~3 s.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("pytestqt")

from conftest import shown_window
from PySide6.QtWidgets import QApplication, QFileDialog, QLabel, QMessageBox, QPushButton

from engine.training import TrainConfig

SMALL = {"d_model": 32, "n_heads": 2, "n_layers": 2, "batch": 8, "steps": 40, "vocab": 24, "seq_len": 17}
TIMEOUT = 60_000  # ms


def _button(panel, name: str) -> QPushButton:
    b = panel.findChild(QPushButton, name)
    assert b is not None and b.isVisible() and b.isEnabled(), name
    return b


def _message(panel) -> str:
    return panel.findChild(QLabel, "training_message").text()


def _train(qtbot, window, steps: int = 10, fresh: bool = True):
    """The window's lab with a custom run of SMALL trained ``steps`` more steps; its panel."""
    from explorer.training import show_training

    panel = show_training(window)
    lab = panel.lab
    if fresh:
        lab.apply_preset(None)
        lab.set_settings(TrainConfig(**SMALL))
        lab.reset()
    before = lab.current.steps_done
    lab.step(steps)
    qtbot.waitUntil(lambda: lab.state in ("paused", "done") and lab.current.steps_done >= before + steps,
                    timeout=TIMEOUT)
    return panel


def _choose(monkeypatch, folder, offered: list | None = None) -> list:
    """The save dialog answers ``folder`` (None: Cancel); the calls made (titles), and the
    name it offered appended to ``offered``."""
    calls = []

    def dialog(parent, title, start, *args, **kwargs):
        calls.append(title)
        if offered is not None:
            offered.append(start)
        return ("" if folder is None else str(folder)), ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(dialog))
    monkeypatch.setattr(QFileDialog, "getExistingDirectory", staticmethod(
        lambda *a, **k: pytest.fail("a folder chooser answers a new folder name with 'Directory not found'")))
    return calls


def _answer(monkeypatch, button) -> list:
    """QMessageBox.question answers ``button``; the texts it was asked."""
    asked = []

    def question(parent, title, text, *args):
        asked.append(text)
        return button

    monkeypatch.setattr(QMessageBox, "question", staticmethod(question))
    return asked


@pytest.fixture(scope="module")
def win(qapp):
    from explorer.training import install_training

    with shown_window(qapp) as w:
        install_training(w)
        yield w


# ---- Save run… ---------------------------------------------------------------------------------------

@pytest.mark.slow
def test_save_run_writes_a_run_folder_and_says_where(win, qtbot, monkeypatch, tmp_path):
    panel = _train(qtbot, win, 12)
    lab = panel.lab
    assert lab.unsaved_run() is lab.current
    target = tmp_path / "kept"
    target.mkdir()  # what the dialog's "New folder" makes
    calls = _choose(monkeypatch, target)
    _button(panel, "training_save").click()
    assert calls == ["Save run"]
    qtbot.waitUntil(lambda: _message(panel).startswith("Saved to"), timeout=TIMEOUT)
    assert _message(panel) == f"Saved to {target}"
    head = json.loads((target / "training_run.json").read_text())
    assert head["steps_done"] == lab.current.steps_done == 12
    assert (target / "model.safetensors").stat().st_size > 0
    assert lab.unsaved_run() is None  # nothing to ask about at quit


def test_a_new_folder_name_is_offered_and_created(win, qtbot, monkeypatch, tmp_path):
    """The dialog is a save dialog (a folder chooser answers a new name with "Directory not
    found", issue 47 item 12): it offers a new folder named after the run in the last folder
    used, and a name that does not exist yet is created with the run in it."""
    panel = _train(qtbot, win, 6)
    lab = panel.lab
    lab.last_save_dir = str(tmp_path)
    offered = []
    _choose(monkeypatch, tmp_path / "new" / "my run", offered)
    _button(panel, "training_save").click()
    qtbot.waitUntil(lambda: _message(panel).startswith("Saved to"), timeout=TIMEOUT)
    assert offered == [str(tmp_path / f"run{lab.current.id}-step6")]
    assert _message(panel) == f"Saved to {tmp_path / 'new' / 'my run'}"
    assert (tmp_path / "new" / "my run" / "training_run.json").is_file()
    assert lab.last_save_dir == str(tmp_path / "new")


def test_a_folder_of_other_files_gets_the_run_in_a_new_folder_inside(win, qtbot, monkeypatch, tmp_path):
    panel = _train(qtbot, win, 5)
    (tmp_path / "notes.txt").write_text("mine")
    _choose(monkeypatch, tmp_path)
    _button(panel, "training_save").click()
    qtbot.waitUntil(lambda: _message(panel).startswith("Saved to"), timeout=TIMEOUT)
    inside = tmp_path / f"run{panel.lab.current.id}-step5"
    assert _message(panel) == f"Saved to {inside}"
    assert (inside / "training_run.json").is_file()
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_file_menu_save_training_run_saves_the_same_way(win, qtbot, monkeypatch, tmp_path):
    panel = _train(qtbot, win, 3, fresh=False)
    action = win.findChild(type(win.sessions.act_open), "action_save_training_run")
    menu = win.menus["file"].actions()
    assert action in menu and menu.index(action) == menu.index(win.sessions.act_save_as) + 1
    assert action.text() == "Save training &run…"
    _choose(monkeypatch, tmp_path / "from_menu")
    action.trigger()
    qtbot.waitUntil(lambda: _message(panel).startswith("Saved to"), timeout=TIMEOUT)
    assert (tmp_path / "from_menu" / "training_run.json").is_file()


def test_an_unwritable_folder_is_said_in_one_line_and_training_goes_on(win, qtbot, monkeypatch, tmp_path):
    panel = _train(qtbot, win, 4)
    (tmp_path / "a_file").write_text("x")
    _choose(monkeypatch, tmp_path / "a_file" / "run")  # below a file: nothing can be written there
    _button(panel, "training_save").click()
    qtbot.waitUntil(lambda: _message(panel).startswith("Not saved"), timeout=TIMEOUT)
    text = _message(panel)
    assert "\n" not in text and "is a file, not a folder" in text and str(tmp_path / "a_file") in text, text
    assert "RunFolderError" not in text and "Traceback" not in text
    assert panel.lab.unsaved_run() is panel.lab.current  # still to be saved
    _train(qtbot, win, 2, fresh=False)  # a failed save does not block Step


@pytest.mark.slow
def test_a_full_disk_is_said_in_one_line(qapp, qtbot, monkeypatch, tmp_path):
    """The training in a thread of this process, so the save can be made to hit a full disk."""
    import errno
    import os

    import safetensors.torch

    from explorer.training import install_training

    monkeypatch.setenv("ATTN_EXPLORER_TRAINING", "thread")
    with shown_window(qapp) as w:
        install_training(w)
        assert w.state.training_lab.worker.mode == "thread"
        panel = _train(qtbot, w, 3)

        def full(*args, **kwargs):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(tmp_path / "x"))

        monkeypatch.setattr(safetensors.torch, "save_file", full)
        _choose(monkeypatch, tmp_path / "kept")
        _button(panel, "training_save").click()
        qtbot.waitUntil(lambda: _message(panel).startswith("Not saved"), timeout=TIMEOUT)
        text = _message(panel)
        assert text == f"Not saved: cannot save the run to {tmp_path / 'kept'}: No space left on device", text
        assert not (tmp_path / "kept").exists() and [p.name for p in tmp_path.iterdir()] == []  # nothing half-written


def test_a_cancelled_dialog_saves_nothing(win, qtbot, monkeypatch, tmp_path):
    panel = _train(qtbot, win, 2)
    _choose(monkeypatch, None)
    _button(panel, "training_save").click()
    QApplication.processEvents()
    assert not _message(panel).startswith(("Saving", "Saved")) and list(tmp_path.iterdir()) == []


def test_an_earlier_run_cannot_be_saved_its_model_is_gone(win, qtbot):
    panel = _train(qtbot, win, 3)
    lab = panel.lab
    old = lab.current
    lab.reset()
    _train(qtbot, win, 2, fresh=False)
    lab.set_view_run(old.id)
    QApplication.processEvents()
    assert not panel.save_button.isEnabled()
    assert not lab.save_run("/nowhere")
    assert "Only the latest run can be saved" in _message(panel)
    lab.set_view_run(None)
    QApplication.processEvents()
    assert panel.save_button.isEnabled()


# ---- the inspector, then a session -------------------------------------------------------------------------

@pytest.mark.slow
def test_a_session_after_open_in_inspector_names_the_saved_folder(win, qtbot, monkeypatch, tmp_path, qapp):
    pytest.importorskip("transformers")
    import explorer

    panel = _train(qtbot, win, 8)
    lab = panel.lab
    _button(panel, "training_inspect").click()
    qtbot.waitUntil(lambda: "model_grid" in win.panel_names(), timeout=TIMEOUT)
    assert win.model_controller.wait_ready(60) is None
    temp = win.model_controller.source
    assert "attention-explorer-run-" in temp  # the temporary folder, deleted at quit
    kept = tmp_path / "kept"
    _choose(monkeypatch, kept)
    _button(panel, "training_save").click()
    qtbot.waitUntil(lambda: _message(panel).startswith("Saved to"), timeout=TIMEOUT)
    assert win.model_info["source"] == str(kept)
    session = tmp_path / "s.json"
    assert win.save_session(session)
    assert json.loads(session.read_text())["model"]["source"] == str(kept)
    # what quitting does to the temporary folder
    import shutil

    shutil.rmtree(Path(temp).parent)
    w2 = explorer.create_window(str(session))
    try:
        c2 = w2.model_controller
        assert c2.wait_ready(60) is None, c2.last_error
        assert len(c2.trace.layers) == lab.current.config.n_layers and c2.trace.n_heads == lab.current.config.n_heads
        assert not w2.banner.message()
    finally:
        w2.shutdown()
        w2.deleteLater()
        qapp.processEvents()


def test_open_in_inspector_of_a_saved_run_opens_its_folder(win, qtbot, monkeypatch, tmp_path):
    pytest.importorskip("transformers")
    panel = _train(qtbot, win, 4)
    _choose(monkeypatch, tmp_path / "kept")
    _button(panel, "training_save").click()
    qtbot.waitUntil(lambda: _message(panel).startswith("Saved to"), timeout=TIMEOUT)
    _button(panel, "training_inspect").click()
    qtbot.waitUntil(lambda: win.model_controller.source == str(tmp_path / "kept"), timeout=TIMEOUT)
    assert win.model_controller.wait_ready(60) is None


# ---- closing the window with a run unsaved ------------------------------------------------------------------

@pytest.mark.slow
def test_closing_asks_about_an_unsaved_run_cancel_keeps_the_window(qapp, qtbot, monkeypatch, tmp_path):
    from explorer.training import install_training

    with shown_window(qapp) as w:
        install_training(w)
        monkeypatch.setattr(w.features["training"], "interactive", True)  # a person answers
        panel = _train(qtbot, w, 6)
        asked = _answer(monkeypatch, QMessageBox.StandardButton.Cancel)
        assert not w.close()
        assert w.isVisible() and len(asked) == 1
        assert "not saved" in asked[0] and "6 steps" in asked[0], asked[0]
        # Save, then the folder dialog cancelled: still open, nothing saved
        asked = _answer(monkeypatch, QMessageBox.StandardButton.Save)
        calls = _choose(monkeypatch, None)
        assert not w.close()
        assert w.isVisible() and len(asked) == 1 and calls == ["Save run"]
        assert list(tmp_path.iterdir()) == []
        # the lab trains on after a Cancel; Discard closes
        _train(qtbot, w, 2, fresh=False)
        assert panel.lab.current.steps_done == 8
        asked = _answer(monkeypatch, QMessageBox.StandardButton.Discard)
        assert w.close() and len(asked) == 1 and not w.isVisible()


@pytest.mark.slow
def test_closing_with_save_saves_then_closes(qapp, qtbot, monkeypatch, tmp_path):
    from explorer.training import install_training

    with shown_window(qapp) as w:
        install_training(w)
        monkeypatch.setattr(w.features["training"], "interactive", True)
        _train(qtbot, w, 7)
        asked = _answer(monkeypatch, QMessageBox.StandardButton.Save)
        _choose(monkeypatch, tmp_path / "on_quit")
        assert not w.close()  # open until the save is done
        qtbot.waitUntil(lambda: not w.isVisible(), timeout=TIMEOUT)
        assert len(asked) == 1
        assert json.loads((tmp_path / "on_quit" / "training_run.json").read_text())["steps_done"] == 7


@pytest.mark.slow
def test_no_question_when_nothing_was_trained_or_the_run_is_saved(qapp, qtbot, monkeypatch, tmp_path):
    from explorer.training import install_training, show_training

    asked = _answer(monkeypatch, QMessageBox.StandardButton.Cancel)
    with shown_window(qapp) as w:
        install_training(w)
        monkeypatch.setattr(w.features["training"], "interactive", True)
        show_training(w)  # the lab open, its first run not trained
        assert w.close() and asked == []
    with shown_window(qapp) as w:
        install_training(w)
        monkeypatch.setattr(w.features["training"], "interactive", True)
        panel = _train(qtbot, w, 3)
        _choose(monkeypatch, tmp_path / "kept")
        _button(panel, "training_save").click()
        qtbot.waitUntil(lambda: _message(panel).startswith("Saved to"), timeout=TIMEOUT)
        assert w.close() and asked == []  # saved as it is


# ---- a session whose model folder is missing ----------------------------------------------------------------

def _session(tmp_path, source: str) -> Path:
    path = tmp_path / "s.json"
    path.write_text(json.dumps({
        "format": "attention-explorer.session", "version": 1, "config": {"n_heads": 2, "seq_len": 6},
        "selection": {"head": 1, "query": 3, "key": 2},
        "model": {"source": source, "text": "abc abc", "layer": 1, "head": 0}}))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["missing", "unreadable"])
def test_a_session_whose_model_folder_is_gone_opens_the_rest_and_says_so(qapp, qtbot, tmp_path, kind):
    import explorer

    folder = tmp_path / "attention-explorer-run-x" / "run"
    if kind == "unreadable":
        folder.mkdir(parents=True)
        (folder / "training_run.json").write_text("{not json")
    w = explorer.create_window(str(_session(tmp_path, str(folder))))
    try:
        w.show()
        qtbot.waitUntil(lambda: str(folder) in w.banner.message(), timeout=TIMEOUT)
        w.render_sync()  # a new frame keeps the message (a "warning", not an error)
        qapp.processEvents()
        text = w.banner.message()
        assert w.banner.bar.isVisible() and "\n" not in text, text
        assert "everything else of the session is open" in text, text
        if kind == "missing":
            assert f"its folder {folder} is missing" in text, text
        else:
            assert f"The session's model {folder} could not be opened (" in text, text
        # everything else: the config, the selection, the session's model entry (saved again)
        assert w.config.n_heads == 2 and w.config.seq_len == 6
        assert (w.selection.head, w.selection.query, w.selection.key) == (1, 3, 2)
        assert w.model_info["source"] == str(folder)
        assert w.model_controller.loaded is None
        # another session, without a model: the message was about the last one, it goes
        other = tmp_path / "other.json"
        other.write_text(json.dumps({"format": "attention-explorer.session", "version": 1,
                                     "config": {"n_heads": 4}}))
        assert w.open_session(other)
        qapp.processEvents()
        assert not w.banner.bar.isVisible() and w.banner.kind is None
    finally:
        w.shutdown()
        w.deleteLater()
        qapp.processEvents()
