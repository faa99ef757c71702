"""shortlink: self-hosted short links that open native apps."""
