"""A project that installs the queue alone (``jobs``): no product app, no JOBS setting, one task."""
