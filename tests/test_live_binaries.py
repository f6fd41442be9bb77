"""Where the live binaries are found (`emulator_binary`, `flow_binary`): $TCPLAB_EMU first,
then the ones installed in the environment's ``bin`` (scripts/setup.sh), then this
checkout's release build; `tcplab-flow` from $TCPLAB_FLOW or next to the emulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from tcplab.live import netns
from tcplab.live.endpoints import flow_binary


@pytest.fixture
def places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    scripts, target = tmp_path / "venv-bin", tmp_path / "target"
    (target / "release").mkdir(parents=True)
    scripts.mkdir()
    monkeypatch.setattr(netns, "_scripts_dir", lambda: scripts)
    monkeypatch.setenv("CARGO_TARGET_DIR", str(target))
    monkeypatch.delenv("TCPLAB_EMU", raising=False)
    monkeypatch.delenv("TCPLAB_FLOW", raising=False)
    for d in (scripts, target / "release"):
        for name in ("tcplab-emu", "tcplab-flow"):
            (d / name).write_text("")
    return {"scripts": scripts, "target": target / "release", "tmp": tmp_path}


def test_the_environment_variable_comes_first(places: dict[str, Path],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TCPLAB_EMU", str(places["tmp"] / "elsewhere" / "tcplab-emu"))
    assert netns.emulator_binary() == places["tmp"] / "elsewhere" / "tcplab-emu"
    assert flow_binary() == places["tmp"] / "elsewhere" / "tcplab-flow"
    monkeypatch.setenv("TCPLAB_FLOW", str(places["tmp"] / "flow"))
    assert flow_binary() == places["tmp"] / "flow"


def test_the_installed_binaries_come_before_the_checkouts_build(places: dict[str, Path]) -> None:
    assert netns.emulator_binary() == places["scripts"] / "tcplab-emu"
    assert flow_binary() == places["scripts"] / "tcplab-flow"


def test_without_an_installed_one_the_checkouts_build(places: dict[str, Path]) -> None:
    (places["scripts"] / "tcplab-emu").unlink()
    assert netns.emulator_binary() == places["target"] / "tcplab-emu"
    assert flow_binary() == places["target"] / "tcplab-flow"
    # A link left dangling (the build it pointed at removed) counts as not installed.
    (places["scripts"] / "tcplab-emu").symlink_to(places["tmp"] / "gone")
    assert netns.emulator_binary() == places["target"] / "tcplab-emu"


def test_the_scripts_dir_is_the_running_environments() -> None:
    import sys
    import sysconfig

    assert netns._scripts_dir() == Path(sysconfig.get_path("scripts"))
    if sys.prefix != sys.base_prefix:  # in a venv: its bin, where the interpreter is
        assert netns._scripts_dir() == Path(sys.prefix) / "bin"
