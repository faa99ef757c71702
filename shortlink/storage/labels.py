"""The label each analytics dimension gives a click it knows nothing about.

These are the most common values by far (most clicks carry no campaign, many no
referrer), so their rollup rows are not stored: a day's count for such a label is
the day's clicks less those of the values that are stored (see analytics.report).
"""

from __future__ import annotations

OTHER_DEVICE = "other"
UNKNOWN_FAMILY = "Other"  # ua-parser's browser or system family when it knows none
UNKNOWN_COUNTRY = "Unknown"
DIRECT = "Direct"
NO_CAMPAIGN = "None"

# Per dimension of clicks.DIMENSIONS.
UNKNOWN = {
    "device": OTHER_DEVICE,
    "browser": UNKNOWN_FAMILY,
    "os": UNKNOWN_FAMILY,
    "country": UNKNOWN_COUNTRY,
    "referrer": DIRECT,
    "campaign": NO_CAMPAIGN,
}
