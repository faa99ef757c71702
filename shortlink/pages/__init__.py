"""The HTML a signed-out person sees, from Jinja templates (`templates/`, autoescaped): the visitor
pages of `/l/<code>` (`visitor.py`, compiled once, never rendered for a redirect), bio pages and
the public form (`templated.py`, which holds the one environment), where a link leads as a page
shows it (`destination.py`), and the one way their Content-Security-Policy is written (`csp.py`).
The dashboard's pages are in `shortlink/dashboard/`."""
