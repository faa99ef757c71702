"""What the fork server of `throwaway.prewarmed` holds before it forks a command: every module a
`shortlink` command may import, and the visitor classifier's tables, built once.

Imported by that fork server only (multiprocessing's preload), never by a test: the tables cost
about a second of CPU, which each forked command then has already.
"""

import gc
import importlib
import pkgutil

import shortlink
from shortlink.visits import automated, enrich

# Every module: the command line imports what a command needs only when it runs it.
for found in pkgutil.walk_packages(shortlink.__path__, "shortlink."):
    if not found.name.endswith("__main__"):
        importlib.import_module(found.name)
automated.warm_up()
enrich.warm_up()

# The forked commands' collector leaves all of the above alone: touching it would copy its
# pages into every fork.
gc.freeze()
