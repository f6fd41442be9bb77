"""Experiments of DIGEST.md that need features other parts of tcplab are still building.
``--list`` shows them as pending; each becomes one module when its feature lands."""

from __future__ import annotations

from tcplab.reproduce.experiment import Experiment

WLAN = "Pang et al., Performance study of TCP Veno over WLAN and RED router"
ETH = "Bolliger, Hengartner, Gross, ETH TR 313, 1999"
ARENO = "Shimonishi, Hama, Murase, TCP-Adaptive Reno, PFLDnet 2006"

EXPERIMENTS = [
    Experiment("wlan-exp1", "4 homogeneous flows over 802.11b, thin/fat pipe, LL/HL", WLAN, "Table I (Exp. 1)", pending="802.11b WLAN model"),
    Experiment("wlan-exp2", "Fairness (STD) of mixed link qualities, fat pipe", WLAN, "Exp. 2", pending="802.11b WLAN model"),
    Experiment("wlan-exp3", "RED vs drop-tail, 6 flows, thin pipe", WLAN, "Exp. 3", pending="802.11b WLAN model and RED"),
    Experiment("areno-fig8", "Multi-bottleneck topology with RED", ARENO, "Fig. 8", pending="parking-lot topology and RED"),
    Experiment("eth-throughput", "Throughput CDFs per protocol", ETH, "§6 medians", pending="ETH virtual campaign"),
    Experiment("eth-timeouts", "Timeouts by cause, stacked bars per protocol", ETH, "§10.2, Table 5", pending="ETH virtual campaign"),
    Experiment("eth-sack-blocks", "Use of the n-th SACK block", ETH, "Table 6", pending="ETH virtual campaign"),
]
