"""Bio pages: one public page per account at /@<handle> listing some of its links as buttons."""
