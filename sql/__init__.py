# tables.py defines the pane tables and adds the rollups of rollups.py, which builds on them:
# loading tables.py first, whichever of the two is imported, keeps that cycle resolvable.
from poolsight.sql import tables as _tables  # noqa: F401
