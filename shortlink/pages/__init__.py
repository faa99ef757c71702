"""The HTML a signed-out person sees: the visitor pages of `/l/<code>` (`visitor.py`, small and
hand-escaped, on the hot path), bio pages and the public form (`templated.py`, Jinja), and the
one way their Content-Security-Policy is written (`csp.py`). The dashboard's pages are in
`shortlink/dashboard/`."""
