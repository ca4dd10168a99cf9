"""The pure core: canonical JSON, fingerprints, tickets, cards, codes and previews.

Nothing in this package performs I/O or imports from the rest of countersign.
"""
