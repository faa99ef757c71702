"""The in-app browsers the visitor path tells apart, by the token each puts in its User-Agent.

A module of its own, below both, because the classifier (visits.classify) tells them apart and
link rules validate their `in_app` conditions against these names wherever a rule is written
(the CLI included), without the classifier's rule tables."""

# In-app browsers (name, token), most specific first: Messenger before Facebook,
# Threads ("Barcelona") before Instagram. Case-sensitive on purpose ("Line/" vs "Linux").
# A group named "version" captures the app's major version where an escape depends on it.
IN_APP_TOKENS = (
    ("messenger", r"FBAN/Messenger|FB_IAB/MESSENGER"),
    ("facebook", r"FBAN/|FBAV/|FB_IAB/|MetaIAB Facebook"),
    ("threads", r"\bBarcelona \d"),
    ("instagram", r"\bInstagram (?P<version>\d+)"),
    ("tiktok", r"musical_ly|BytedanceWebview|\bTikTok\b"),
    ("linkedin", r"LinkedInApp"),
    ("snapchat", r"Snapchat/"),
    ("whatsapp", r"WhatsApp/|WAiOS/|WA4A/"),
    ("line", r"\bLine/\d"),
    ("wechat", r"MicroMessenger/"),  # also on the X5 engine ("MQQBrowser/6.2 TBS/045223")
    # Without a leading \b, which would make every new agent's search dearer (docs/bots.md).
    ("qq", r" QQ/\d"),  # QQ's in-app browser; the QQ Browser app says "MQQBrowser/" alone
    ("google", r"GoogleApp/|GSA/\d"),  # the Google app: "GoogleApp/" on Android, "GSA/" on iOS
    ("twitter", r"Twitter for iP|TwitterAndroid"),
    ("viber", r"\bViber/\d"),  # the app's browser; its preview fetcher says "Viber" alone
    ("reddit", r"\bReddit/Version"),
)
