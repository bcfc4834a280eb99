"""Reading a failure: its fingerprint (``fingerprint``: pure; may import ``dbglog.run``'s readers and ``dbglog.util``)."""
