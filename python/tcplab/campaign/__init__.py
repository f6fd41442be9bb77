"""``tcplab campaign``: a virtual rerun of the ETH report's measurement campaign."""
