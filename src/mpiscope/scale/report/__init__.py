"""What ``scale report`` and ``scale export`` show: ``collect`` (profiles -> rows),
``aggregate`` (per-P statistics), ``models``, ``build`` (the report dict), and its views
``tables``, ``plots``, ``html_page``, ``export``."""
