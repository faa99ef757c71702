"""What the fork server of `throwaway.prewarmed` holds before it forks a command: every module a
`shortlink` command may import, and the visitor classifier's tables, built once.

Imported by that fork server only (multiprocessing's preload), never by a test: the tables cost
about a second of CPU, which each forked command then has already.
"""

from shortlink import cli as cli
from shortlink.visits import automated, enrich

automated.warm_up()
enrich.warm_up()
