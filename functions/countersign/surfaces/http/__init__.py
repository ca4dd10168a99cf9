"""ASGI and Lambda wrappers every HTTP surface shares: the CloudFront origin proof and the caller's
address (:mod:`.origin`), a request-body limit (:mod:`.body_limit`) and the request limits
(:mod:`.request_limits`). Nothing here imports the MCP SDK: the ``api`` function loads it never."""
