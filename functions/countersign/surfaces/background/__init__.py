"""What runs without a request: the table's stream delivering the outbox (:mod:`.notifier`), the
schedule's upkeep (:mod:`.sweeper`) and SES's bounces and complaints (:mod:`.feedback`)."""
