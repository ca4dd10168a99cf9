"""The pure core: canonical JSON, fingerprints, tickets, cards, codes and previews.

Nothing in this package performs I/O or imports from the rest of countersign. The crash points
(:mod:`.crash_points`) sit here because the gate, the notifier and the SQLite store all call them;
outside the crash tests each is a no-op.
"""
