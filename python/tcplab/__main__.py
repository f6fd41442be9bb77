"""``python -m tcplab`` is the ``tcplab`` command."""

from tcplab.cli import app

app(prog_name="tcplab")
