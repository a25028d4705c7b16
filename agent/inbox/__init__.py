"""What happens around a reviewed document: members correct and confirm its fields, accept its
findings and move its work state; their notifications and the tenant's webhooks. It stands on
the review (``agent.review``) and the reading (``agent.reading``); neither imports it."""
