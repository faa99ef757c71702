"""The HTTP transport: the Litestar app, the API controllers and the visitor routes."""
