"""HTML reports: one self-contained offline file per profile (docs/html.md).

- :mod:`.page`: the page-assembly API (escaping, sections, sortable tables,
  plotly figures, the inlined bundle); reusable by other parts.
- :mod:`.escape`: how profile strings become text.
- :mod:`.ranks`: per-rank views downsampled with min/max kept.
- :mod:`.matrix`: the peer matrix aggregated into blocks.
- :mod:`.charts`: plotly figures of the views; :mod:`.tables`, :mod:`.explain`:
  the report, POP and diagnosis dicts as HTML.
- :mod:`.profile_page`: the page of one profile; :mod:`.cli`: ``mpiscope html``.
"""
