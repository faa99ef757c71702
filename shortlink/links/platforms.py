"""The Platform of a link, detected once from its destination at creation."""
from __future__ import annotations

import enum


class Platform(str, enum.Enum):
    YOUTUBE = "YOUTUBE"
    INSTAGRAM = "INSTAGRAM"
    TWITTER = "TWITTER"
    FACEBOOK = "FACEBOOK"
    LINKEDIN = "LINKEDIN"
    REDDIT = "REDDIT"
    SHORTLINK = "SHORTLINK"  # the service's own host ("the service" in the spec)
    SPOTIFY = "SPOTIFY"
    AMAZON = "AMAZON"
    APPSTORE = "APPSTORE"
    PLAYSTORE = "PLAYSTORE"
    OTHER = "OTHER"
