"""What every HTTP door shares (the API and visitor routes in `web/`, the dashboard, MCP): the
error envelope (`envelope`), the bounds a request keeps before any work is done on it (`bounds`),
and the public shortening form, which the dashboard's signed-out home shows too (`public`).
It imports none of those doors, so each of them can import it."""
