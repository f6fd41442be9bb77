"""tcplab: a TCP congestion-control laboratory."""

from tcplab import _native

__version__ = _native.version()
