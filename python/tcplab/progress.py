"""The progress bars of tcplab (rich, on stderr unless given a console): one module for
``tcplab run`` (simulated time) and for the batches of sweeps, reproductions and campaigns
(items done, elapsed, ETA)."""

from __future__ import annotations

from typing import Any

__all__ = ["CountProgress", "SimProgress"]


def _progress(console: Any, middle: tuple[Any, ...], tail: tuple[Any, ...] = ()) -> Any:
    """label, bar, ``middle``, elapsed time, ``tail``."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        *middle,
        TimeElapsedColumn(),
        *tail,
        console=console or Console(stderr=True),
        transient=False,
    )


class SimProgress:
    """A bar in simulated seconds; an instance is the ``progress(now_ns, end_ns)`` callback of
    :func:`tcplab.run`. Use it as a context manager."""

    def __init__(self, label: str, console: Any = None, what: str = "simulated"):
        from rich.progress import TextColumn

        self.progress = _progress(console, (TextColumn("{task.fields[sim]} " + what),))
        self.label = label
        self.task: Any = None

    def __enter__(self) -> SimProgress:
        # The bar appears at the first call, once the simulation is built: a scenario the
        # simulator refuses leaves only its one-line error on the terminal.
        return self

    def __call__(self, now_ns: int, end_ns: int) -> None:
        if self.task is None:
            self.progress.__enter__()
            self.task = self.progress.add_task(self.label, total=1.0, sim="0 s")
        frac = 1.0 if end_ns == 0 else min(1.0, now_ns / end_ns)
        self.progress.update(self.task, completed=frac, sim=f"{now_ns / 1e9:.3g} s / {end_ns / 1e9:g} s")

    def __exit__(self, *exc: object) -> None:
        if self.task is not None:
            self.progress.__exit__(*exc)


class CountProgress:
    """A bar over ``total`` items (``unit``: "points", "probes"), ``done`` of them already
    stored; count, elapsed time, ETA and the last item's label. ``progress``: True (stderr),
    False (nothing) or a rich Console to draw on. Use it as a context manager."""

    def __init__(self, label: str, total: int, done: int = 0, progress: bool | Any = True, unit: str = "points"):
        self.enabled = bool(progress)
        self.console = None if isinstance(progress, bool) else progress
        self.label, self.total, self.done, self.unit = label, total, done, unit

    def __enter__(self) -> CountProgress:
        if self.enabled:
            from rich.progress import MofNCompleteColumn, TextColumn, TimeRemainingColumn

            self.progress = _progress(
                self.console,
                (MofNCompleteColumn(), TextColumn(self.unit)),
                (TextColumn("ETA"), TimeRemainingColumn(), TextColumn("{task.fields[last]}")),
            )
            self.progress.__enter__()
            self.task = self.progress.add_task(
                self.label, total=self.total, completed=self.done, last=f"({self.done} stored)"
            )
        return self

    def advance(self, label: str = "") -> None:
        """One more item done (``label``: what it was)."""
        if self.enabled:
            self.progress.update(self.task, advance=1, last=label[:60])

    def stored(self, label: str = "") -> None:
        """One more item found already stored (counted as done; the label says how many)."""
        self.done += 1
        if self.enabled:
            self.progress.update(self.task, advance=1, last=f"({self.done} stored)")

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self.progress.__exit__(*exc)
