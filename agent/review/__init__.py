"""The bounded review of one document: the declared steps, the tools that run them, the planner
and the policy that checks it, the model's reading and the provider calls, the supplier
register's findings, the fingerprint, and the workflow that checkpoints each step. It reads
documents through ``agent.reading``; it never imports what the members do with a finished
review (``agent.inbox``)."""
