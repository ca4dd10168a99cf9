"""Slack as a surface: the buttons of a card's message and the ``/countersign`` slash command
come back here (:mod:`.routes`), proved by Slack's signature (:mod:`.signed`); link codes are
:mod:`.linking`. Served by the confirm API's app (locally under ``/slack``; on AWS the API function,
which CloudFront's ``/slack/*`` behaviour reaches)."""
