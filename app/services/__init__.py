"""Logic behind the routes. Services take validated requests, return plain data, and know nothing of HTTP."""
